package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/build/dockerfile"
)

// ErrInvalid marks a commit whose objects knit refuses: the commit is
// wrong, retrying will not help, the user must push a fix.
var ErrInvalid = errors.New("invalid objects")

// Commit is what a sync deploys.
type Commit struct {
	// Repository is the GitRepository's name; Namespace its namespace,
	// where everything lands.
	Repository, Namespace string
	// Branch the commit is the head of; Main says whether it is the
	// repository's first tracked branch.
	Branch string
	Main   bool
	// SHA, Author ("Name <email>") and Message of the commit.
	SHA, Author, Message string
}

// Input is one branch's sync: the rendered objects and what is live.
type Input struct {
	Commit   Commit
	Rendered []*unstructured.Unstructured
	// Live returns the Service of that name as it is now, nil if none.
	Live func(name string) *servingv1.Service
	// Canaries are the open pull requests into this branch, per rendered
	// Service name (before the branch suffix).
	Canaries map[string][]Canary
	// Namespaced says whether a kind is namespaced (the API's RESTMapper).
	Namespaced func(schema.GroupVersionKind) (bool, error)
	// Kinds is what the repository may deploy; the zero Kinds allows
	// DefaultAllowedKinds.
	Kinds Kinds
	// Rollout returns the traffic of a Service a stepped rollout holds
	// (package rollout), given the Service as planned, its template named
	// for this commit, before the pull requests' canaries take their
	// share; nil keeps Git's traffic. An error refuses the commit.
	Rollout func(svc *servingv1.Service) ([]servingv1.TrafficTarget, error)
	// Source fingerprints the commit's app sources (SourceFingerprint):
	// a Service built from the repository (ko://./…) gets a new Revision
	// when they change, even if its YAML did not.
	Source string
}

var serviceGVK = servingv1.GroupVersion.WithKind("Service")

// Objects is what to apply for one branch's commit, in render order.
func Objects(in Input) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(in.Rendered))
	var errs []error
	for _, obj := range in.Rendered {
		o, err := object(in, obj.DeepCopy())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, o)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return out, nil
}

func object(in Input, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	ref := fmt.Sprintf("%s %s", gvk.Kind, obj.GetName())
	namespaced, err := in.Namespaced(gvk)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	if !namespaced {
		return nil, fmt.Errorf("%s: cluster-scoped objects are not deployed from Git; apply them once by hand", ref)
	}
	if ns := obj.GetNamespace(); ns != "" && ns != in.Commit.Namespace {
		return nil, fmt.Errorf("%s: namespace %q is not the GitRepository's %q; drop metadata.namespace or move the GitRepository", ref, ns, in.Commit.Namespace)
	}
	check := in.Kinds.Check(gvk.GroupKind())
	if isSecret(gvk.GroupKind()) {
		check = checkSecret(obj)
	}
	if check != nil {
		return nil, fmt.Errorf("%s %s: %w", KindString(gvk.GroupKind()), obj.GetName(), check)
	}
	obj.SetNamespace(in.Commit.Namespace)
	if gvk == serviceGVK {
		return service(in, obj)
	}
	stamp(obj, in.Commit)
	return obj, nil
}

// stamp labels an object with where it came from.
func stamp(obj metaObject, c Commit) {
	obj.SetLabels(with(obj.GetLabels(), RepositoryLabel, c.Repository, BranchLabel, c.Branch))
	obj.SetAnnotations(with(obj.GetAnnotations(), CommitAnnotation, c.SHA))
}

type metaObject interface {
	GetLabels() map[string]string
	SetLabels(map[string]string)
	GetAnnotations() map[string]string
	SetAnnotations(map[string]string)
}

func with(m map[string]string, kv ...string) map[string]string {
	if m == nil {
		m = make(map[string]string, len(kv)/2)
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// service names the Service for its branch, keeps or stamps its Revision
// and adds the pull requests' canaries.
func service(in Input, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	svc := &servingv1.Service{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, svc); err != nil {
		return nil, fmt.Errorf("Service %s: %w", obj.GetName(), err)
	}
	gitName := svc.Name
	svc.Name = ServiceName(gitName, in.Commit.Branch, in.Commit.Main)
	stamp(svc, in.Commit)
	tmpl := &svc.Spec.Template
	tmpl.Labels = with(tmpl.Labels, RepositoryLabel, in.Commit.Repository, BranchLabel, in.Commit.Branch)
	source := ""
	if BuildsFromRepository(tmpl) {
		source = in.Source
	}
	hash, err := templateHash(tmpl, source)
	if err != nil {
		return nil, fmt.Errorf("Service %s: %w", gitName, err)
	}
	svc.Annotations[TemplateHashAnnotation] = hash
	if tmpl.Name == "" { // a name written in Git is the user's choice
		nameRevision(svc, hash, in.Live(svc.Name), in.Commit)
	}
	for _, t := range svc.Spec.Traffic {
		// Admission would refuse it too, after the canaries were added.
		if p := t.Percent; p != nil && (*p < 0 || *p > 100) {
			return nil, fmt.Errorf("Service %s: traffic percent %d is not between 0 and 100", gitName, *p)
		}
	}
	if in.Rollout != nil {
		if svc.Spec.Traffic, err = in.Rollout(svc); err != nil {
			return nil, fmt.Errorf("Service %s: %w", gitName, err)
		}
	}
	svc.Spec.Traffic = WithCanaries(svc.Spec.Traffic, in.Canaries[gitName])

	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(svc)
	if err != nil {
		return nil, fmt.Errorf("Service %s: %w", gitName, err)
	}
	out := &unstructured.Unstructured{Object: u}
	out.SetGroupVersionKind(serviceGVK)
	unstructured.RemoveNestedField(out.Object, "status")
	unstructured.RemoveNestedField(out.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(out.Object, "spec", "template", "metadata", "creationTimestamp")
	return out, nil
}

// nameRevision keeps the live Revision when the template is unchanged,
// else stamps <service>-<sha7> with the commit's identity.
func nameRevision(svc *servingv1.Service, hash string, live *servingv1.Service, c Commit) {
	tmpl := &svc.Spec.Template
	if live != nil && live.Annotations[TemplateHashAnnotation] == hash && live.Spec.Template.Name != "" {
		tmpl.Name = live.Spec.Template.Name
		a := live.Spec.Template.Annotations
		tmpl.Annotations = with(tmpl.Annotations, CommitAnnotation, a[CommitAnnotation], AuthorAnnotation, a[AuthorAnnotation], MessageAnnotation, a[MessageAnnotation])
		return
	}
	tmpl.Name = RevisionName(svc.Name, c.SHA)
	tmpl.Annotations = with(tmpl.Annotations, CommitAnnotation, c.SHA, AuthorAnnotation, c.Author, MessageAnnotation, firstLine(c.Message))
}

// templateHash fingerprints the template as rendered, before knit names
// it: equal hashes mean the commit did not change what the app runs.
func templateHash(tmpl *servingv1.RevisionTemplateSpec, source string) (string, error) {
	b, err := json.Marshal(tmpl)
	if err != nil {
		return "", fmt.Errorf("hash template: %w", err)
	}
	sum := sha256.Sum256(append(b, source...))
	return hex.EncodeToString(sum[:8]), nil
}

// BuildsFromRepository reports whether a template runs code from the
// repository itself: a ko://./relative image, or a dockerfile:// image
// (always a directory of the repository), in a container or an init
// container.
func BuildsFromRepository(tmpl *servingv1.RevisionTemplateSpec) bool {
	for _, cs := range [][]corev1.Container{tmpl.Spec.Containers, tmpl.Spec.InitContainers} {
		for _, c := range cs {
			if strings.HasPrefix(c.Image, "ko://./") || strings.HasPrefix(c.Image, "ko://../") || dockerfile.IsRef(c.Image) {
				return true
			}
		}
	}
	return false
}

// firstLine is a commit message's subject, bounded for an annotation.
func firstLine(msg string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	return line
}
