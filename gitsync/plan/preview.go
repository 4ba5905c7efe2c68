package plan

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// A pull request's preview is its head rendered as a whole, next to
// production and never over it: the Services the base branch has get a
// preview Revision in their traffic (PullRequestRevision); the Services
// the head adds get preview Services of their own; the ConfigMaps and
// EventSinks the head adds or changes get preview copies, which the
// preview Revisions and Services read instead of production's. Every
// preview object but the Revisions is named PreviewName and labelled
// with PullRequestLabel, which is how it is found again to be pruned.

var (
	configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	eventSinkGVK = knitv1alpha1.GroupVersion.WithKind("EventSink")
)

// PreviewName is what pull request number calls its own copy of an
// object production calls name: <name>-pr-<N>, shortened as Knative
// shortens derived names past 63 characters. No spelling can be kept
// from every production name, since a Service on the main branch may be
// called anything (hello-pr-1 included); the controller therefore never
// writes over an object that is not labelled as this pull request's
// preview.
func PreviewName(name string, number int64) string { return join(name, Tag(number)) }

// PreviewInput is one pull request's head against its base branch.
type PreviewInput struct {
	// Head is the head commit; its Branch is what labels carry.
	Head Commit
	// Number is the pull request's.
	Number int64
	// BaseBranch and BaseMain say which branch the pull request merges
	// into, for the names its Services get there (ServiceName).
	BaseBranch string
	BaseMain   bool
	// Base and Rendered are the base branch's and the head's objects as
	// rendered from Git, before Objects names them.
	Base, Rendered []*unstructured.Unstructured
	// Kinds is what the repository may deploy: a head cannot preview a
	// kind its base could not deploy.
	Kinds Kinds
	// BaseSource and HeadSource fingerprint the two commits' app sources
	// (SourceFingerprint): a Service built from the repository changes
	// when they differ, whatever its YAML.
	BaseSource, HeadSource string
}

// Preview is what a pull request's head deploys besides its preview
// Revisions.
type Preview struct {
	// Existing are the head's Services that the base branch has too and
	// the head changes (their YAML, the sources they are built from, a
	// ConfigMap they read), as rendered, with their references rewritten
	// to the copies: each gets a preview Revision in its base Service's
	// traffic. A Service the head leaves as it is gets none, production's
	// being its preview, unless the head changes no Service at all.
	Existing []*unstructured.Unstructured
	// Services are the preview Services of the Services the head adds,
	// ready to apply.
	Services []*unstructured.Unstructured
	// Copies are the preview copies of the ConfigMaps and EventSinks the
	// head adds or changes, ready to apply.
	Copies []*unstructured.Unstructured
}

// PlanPreview works out a pull request's preview from its base and head
// renders. An object knit would refuse on the base branch is refused
// here too, wrapped in ErrInvalid and named.
func PlanPreview(in PreviewInput) (*Preview, error) {
	base := byKindName(in.Base)
	renames := map[string]string{} // ConfigMap Git name → copy
	out := &Preview{}
	var errs []error
	for _, o := range in.Rendered {
		gvk := o.GroupVersionKind()
		if gvk != configMapGVK && gvk != eventSinkGVK || !changed(o, base[kindName{gvk, o.GetName()}]) {
			continue
		}
		c, err := previewCopy(in, o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if gvk == configMapGVK {
			renames[o.GetName()] = c.GetName()
		}
		out.Copies = append(out.Copies, c)
	}
	errs = append(errs, out.addServices(in, base, renames, false))
	if len(out.Existing) == 0 && len(out.Services) == 0 && errors.Join(errs...) == nil {
		// A head that changes no Service (docs, a Route) still gets a URL
		// to look at: a preview of each of the base's, as they are.
		errs = append(errs, out.addServices(in, base, renames, true))
	}
	errs = append(errs, out.checkNames(in))
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return out, nil
}

// checkNames refuses a preview object named as an object the base branch
// deploys: the branch's apply, in the same pass, would take it over. The
// controller checks the live objects too: this catches the ones the
// branch is about to create.
func (p *Preview) checkNames(in PreviewInput) error {
	production := map[kindName]bool{}
	for _, o := range in.Base {
		name := o.GetName()
		if o.GroupVersionKind() == serviceGVK {
			name = ServiceName(name, in.BaseBranch, in.BaseMain)
		}
		production[kindName{o.GroupVersionKind(), name}] = true
	}
	var errs []error
	for _, o := range slices.Concat(p.Copies, p.Services) {
		if production[kindName{o.GroupVersionKind(), o.GetName()}] {
			errs = append(errs, fmt.Errorf("%s %s: the preview would take the name of the base branch's own %s", o.GetKind(), o.GetName(), o.GetKind()))
		}
	}
	return errors.Join(errs...)
}

type kindName struct {
	gvk  schema.GroupVersionKind
	name string
}

func byKindName(objs []*unstructured.Unstructured) map[kindName]*unstructured.Unstructured {
	m := make(map[kindName]*unstructured.Unstructured, len(objs))
	for _, o := range objs {
		m[kindName{o.GroupVersionKind(), o.GetName()}] = o
	}
	return m
}

// changed reports whether head's ConfigMap or EventSink holds what
// base's does not: its data for a ConfigMap, its spec for an EventSink.
// Labels and annotations do not count: what the app reads does.
func changed(head, base *unstructured.Unstructured) bool {
	if base == nil {
		return true
	}
	fields := [][]string{{"spec"}}
	if head.GroupVersionKind() == configMapGVK {
		fields = [][]string{{"data"}, {"binaryData"}}
	}
	for _, f := range fields {
		h, _, _ := unstructured.NestedFieldNoCopy(head.Object, f...)
		b, _, _ := unstructured.NestedFieldNoCopy(base.Object, f...)
		if !equality.Semantic.DeepEqual(h, b) {
			return true
		}
	}
	return false
}

// previewCopy is pull request in.Number's copy of a ConfigMap or
// EventSink. A copy is never immutable: the next head commit updates it
// in place.
func previewCopy(in PreviewInput, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := o.GroupVersionKind()
	if err := previewable(in, o); err != nil {
		return nil, err
	}
	c := o.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "immutable")
	unstructured.RemoveNestedField(c.Object, "status")
	c.SetName(PreviewName(o.GetName(), in.Number))
	c.SetNamespace(in.Head.Namespace)
	stampPreview(c, in.Head, in.Number)
	c.SetGroupVersionKind(gvk)
	return c, nil
}

// previewable refuses what Objects would refuse on the base branch: a
// kind the repository may not deploy, another namespace.
func previewable(in PreviewInput, o *unstructured.Unstructured) error {
	gvk := o.GroupVersionKind()
	if err := in.Kinds.Check(gvk.GroupKind()); err != nil {
		return fmt.Errorf("%s %s: %w", KindString(gvk.GroupKind()), o.GetName(), err)
	}
	if ns := o.GetNamespace(); ns != "" && ns != in.Head.Namespace {
		return fmt.Errorf("%s %s: namespace %q is not the GitRepository's %q", gvk.Kind, o.GetName(), ns, in.Head.Namespace)
	}
	return nil
}

// stampPreview labels a preview object with its repository, head branch
// and pull request, which is how pruning finds it.
func stampPreview(obj metaObject, head Commit, number int64) {
	stamp(obj, head)
	obj.SetLabels(with(obj.GetLabels(), PullRequestLabel, strconv.FormatInt(number, 10)))
}

// addServices adds the head's Services: the changed ones the base has
// (all of them when all), and a preview Service for each it adds.
func (p *Preview) addServices(in PreviewInput, base map[kindName]*unstructured.Unstructured, renames map[string]string, all bool) error {
	var errs []error
	for _, o := range in.Rendered {
		if o.GroupVersionKind() != serviceGVK {
			continue
		}
		b, ok := base[kindName{serviceGVK, o.GetName()}]
		switch {
		case ok:
			errs = append(errs, p.addExisting(in, o, b, renames, all))
		case !all:
			errs = append(errs, p.addService(in, o, renames))
		}
	}
	return errors.Join(errs...)
}

// addExisting keeps a Service the base has, if the head changes it or
// always is set, its references rewritten.
func (p *Preview) addExisting(in PreviewInput, o, base *unstructured.Unstructured, renames map[string]string, always bool) error {
	svc, err := serviceOf(o)
	if err != nil {
		return err
	}
	reads := RewriteConfigMapRefs(&svc.Spec.Template.Spec.PodSpec, renames)
	if !always && len(reads) == 0 && equality.Semantic.DeepEqual(o.Object, base.Object) &&
		(in.BaseSource == in.HeadSource || !BuildsFromRepository(&svc.Spec.Template)) {
		return nil
	}
	u, err := unstructuredOf(svc)
	if err != nil {
		return err
	}
	p.Existing = append(p.Existing, u)
	return nil
}

// addService makes the preview Service of a Service the head adds: named
// PreviewName of what the merge would call it, all its traffic to its
// latest Revision (the head's traffic names Revisions the preview does
// not have), its Revision named for the head commit.
func (p *Preview) addService(in PreviewInput, o *unstructured.Unstructured, renames map[string]string) error {
	if err := previewable(in, o); err != nil {
		return err
	}
	svc, err := serviceOf(o)
	if err != nil {
		return err
	}
	svc.Name = PreviewName(ServiceName(svc.Name, in.BaseBranch, in.BaseMain), in.Number)
	svc.Namespace = in.Head.Namespace
	svc.Spec.Traffic = nil
	stampPreview(svc, in.Head, in.Number)
	tmpl := &svc.Spec.Template
	// Not PullRequestLabel: the Service's Configuration owns its
	// Revisions, which the preview Revisions' pruning must not reach.
	tmpl.Labels = with(tmpl.Labels, RepositoryLabel, in.Head.Repository, BranchLabel, in.Head.Branch)
	tmpl.Name = RevisionName(svc.Name, in.Head.SHA)
	tmpl.Annotations = with(tmpl.Annotations, CommitAnnotation, in.Head.SHA, AuthorAnnotation, in.Head.Author,
		MessageAnnotation, firstLine(in.Head.Message))
	RewriteConfigMapRefs(&tmpl.Spec.PodSpec, renames)
	u, err := unstructuredOf(svc)
	if err != nil {
		return err
	}
	p.Services = append(p.Services, u)
	return nil
}

func serviceOf(o *unstructured.Unstructured) (*servingv1.Service, error) {
	svc := &servingv1.Service{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, svc); err != nil {
		return nil, fmt.Errorf("Service %s: %w", o.GetName(), err)
	}
	return svc, nil
}

func unstructuredOf(svc *servingv1.Service) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(svc)
	if err != nil {
		return nil, fmt.Errorf("Service %s: %w", svc.Name, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(serviceGVK)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	return u, nil
}

// RewriteConfigMapRefs points every reference spec makes to a ConfigMap
// in renames at its new name: configMap volumes, projected volumes'
// configMap sources, envFrom configMapRefs and env configMapKeyRefs, in
// containers and init containers alike. It returns the names it
// rewrote, sorted, once each. Secrets are left alone: previews read
// production's.
func RewriteConfigMapRefs(spec *servingv1.PodSpec, renames map[string]string) []string {
	seen := map[string]bool{}
	rename := func(name *string) {
		if to, ok := renames[*name]; ok {
			seen[*name] = true
			*name = to
		}
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if v.ConfigMap != nil {
			rename(&v.ConfigMap.Name)
		}
		if v.Projected != nil {
			for j := range v.Projected.Sources {
				if s := v.Projected.Sources[j].ConfigMap; s != nil {
					rename(&s.Name)
				}
			}
		}
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			rewriteContainer(&cs[i], rename)
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func rewriteContainer(c *corev1.Container, rename func(*string)) {
	for i := range c.EnvFrom {
		if r := c.EnvFrom[i].ConfigMapRef; r != nil {
			rename(&r.Name)
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.ConfigMapKeyRef != nil {
			rename(&vf.ConfigMapKeyRef.Name)
		}
	}
}
