package webhooks

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/revision/resources"
)

// The values of features.knative.dev/podspec-dryrun: "enabled" runs the
// dry run and lets a server that cannot dry-run pass; "strict" fails then.
const (
	dryRunEnabled = "enabled"
	dryRunStrict  = "strict"
)

// podDryRun is config-features kubernetes.podspec-dryrun: a template's pod
// is created as a server-side dry run, so a pod Kubernetes itself would
// refuse (a quota, a LimitRange, a Pod Security level, another admission
// webhook, a field knit does not check) is refused at the Service, with
// the API server's own words, instead of a Revision whose Deployment
// never makes a pod. Nothing is stored: the API server runs every
// admission step and stops before etcd.
type podDryRun struct {
	c client.Client
}

// mode is the dry run asked of an object with these annotations: "" for
// none. Enabled runs it for every object (strict only when asked),
// Allowed only for objects annotated with a mode, Disabled never.
func dryRunMode(f config.Feature, annotations map[string]string) string {
	mode := strings.ToLower(annotations[config.DryRunAnnotation])
	switch f {
	case config.FeatureEnabled:
		if mode != dryRunStrict {
			mode = dryRunEnabled
		}
	case config.FeatureAllowed:
	default:
		return ""
	}
	if mode != dryRunEnabled && mode != dryRunStrict {
		return ""
	}
	return mode
}

// check dry-runs the pod of template (at path) in namespace, unless the
// flag or annotations say not to or an update left the template as it
// was (old nil on create).
func (d podDryRun) check(ctx context.Context, namespace string, annotations map[string]string, template, old *servingv1.RevisionTemplateSpec, path *field.Path, features config.Features) field.ErrorList {
	mode := dryRunMode(features.PodSpecDryRun, annotations)
	if d.c == nil || mode == "" || (old != nil && equality.Semantic.DeepEqual(template, old)) {
		return nil
	}
	pod := dryRunPod(namespace, template)
	err := d.c.Create(ctx, pod, client.DryRunAll)
	switch {
	case err == nil:
		return nil
	case mode != dryRunStrict && strings.Contains(err.Error(), "does not support dry run"):
		// Another webhook on pods without sideEffects None: Knative
		// lets that pass unless strict.
		return nil
	}
	return field.ErrorList{field.Forbidden(path, "dry run failed with "+err.Error())}
}

// dryRunPod is the pod a Revision stamped from template would run, its
// containers as the Deployment has them without the queue-proxy, which
// is knit's, not the user's (Knative's BuildPodSpec with user containers).
func dryRunPod(namespace string, template *servingv1.RevisionTemplateSpec) *corev1.Pod {
	meta := metav1.ObjectMeta{GenerateName: "dry-run-validation-", Namespace: namespace}
	rev := &servingv1.Revision{ObjectMeta: meta, Spec: *template.Spec.DeepCopy()}
	spec := resources.MakeDeployment(rev, resources.DeploymentConfig{}).Spec.Template.Spec
	spec.Containers = spec.Containers[:len(spec.Containers)-1]
	return &corev1.Pod{ObjectMeta: meta, Spec: spec}
}

// service dry-runs a Service's template.
func (d podDryRun) service(ctx context.Context, s, old *servingv1.Service, cfg Config) field.ErrorList {
	var was *servingv1.RevisionTemplateSpec
	if old != nil {
		was = &old.Spec.Template
	}
	return d.check(ctx, s.Namespace, s.Annotations, &s.Spec.Template, was, field.NewPath("spec", "template"), cfg.Features)
}

// configuration dry-runs a Configuration's template, unless a Service
// owns it: its Service's was checked already, as in Knative.
func (d podDryRun) configuration(ctx context.Context, c, old *servingv1.Configuration, cfg Config) field.ErrorList {
	if c.Labels[servingv1.ServiceLabelKey] != "" {
		return nil
	}
	var was *servingv1.RevisionTemplateSpec
	if old != nil {
		was = &old.Spec.Template
	}
	return d.check(ctx, c.Namespace, c.Annotations, &c.Spec.Template, was, field.NewPath("spec", "template"), cfg.Features)
}
