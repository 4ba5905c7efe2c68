package webhooks

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// validateTemplate is Knative's RevisionTemplateSpec.Validate for a
// template at path inside the object whose metadata is parent.
func validateTemplate(t servingv1.RevisionTemplateSpec, parent metav1.ObjectMeta, path *field.Path, cfg Config) field.ErrorList {
	meta := path.Child("metadata")
	errs := validateRevisionName(t.ObjectMeta, parent, meta)
	errs = append(errs, validateDerivedMetadata(t.Labels, t.Annotations, templateCreator(parent.Annotations), meta)...)
	errs = append(errs, validateAutoscalingAnnotations(t.Annotations, meta.Child("annotations"), cfg)...)
	errs = append(errs, validateQueueSidecarAnnotations(t.Annotations, meta.Child("annotations"))...)
	return append(errs, validateRevisionSpec(t.Spec, path.Child("spec"), cfg)...)
}

// validateParentMetadata checks the metadata of a Service, Configuration or
// Route: its name, and no autoscaling annotations where they do nothing.
func validateParentMetadata(meta metav1.ObjectMeta) field.ErrorList {
	p := field.NewPath("metadata")
	errs := validateObjectName(meta, p)
	return append(errs, validateNoAutoscalingAnnotations(meta.Annotations, p.Child("annotations"))...)
}
