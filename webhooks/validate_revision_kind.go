package webhooks

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// validateRevision is Knative's Revision.Validate; old is nil on create.
// The spec is validated when the Revision is created; afterwards it may
// not change at all, so a cluster whose limits tightened can still label
// and finalize its old Revisions.
func validateRevision(r, old *servingv1.Revision, cfg Config) field.ErrorList {
	meta := field.NewPath("metadata")
	errs := validateObjectName(r.ObjectMeta, meta)
	// Its own creator annotation is already among its annotations.
	errs = append(errs, validateDerivedMetadata(r.Labels, r.Annotations, "", meta)...)
	errs = append(errs, validateAutoscalingAnnotations(r.Annotations, meta.Child("annotations"), cfg)...)
	errs = append(errs, validateQueueSidecarAnnotations(r.Annotations, meta.Child("annotations"))...)
	if old != nil {
		return append(errs, validateSpecImmutable(old.Spec, r.Spec, field.NewPath("spec"))...)
	}
	return append(errs, validateRevisionSpec(r.Spec, field.NewPath("spec"), cfg)...)
}
