package webhooks

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// validateRoute is Knative's Route.Validate. A Route has nothing
// update-specific to check, so old is unused.
func validateRoute(r, _ *servingv1.Route, _ Config) field.ErrorList {
	errs := validateParentMetadata(r.ObjectMeta)
	errs = append(errs, validateVisibility(r.Labels, field.NewPath("metadata", "labels"))...)
	errs = append(errs, validateHTTPProtocol(r.Annotations, field.NewPath("metadata", "annotations"))...)
	errs = append(errs, validateRolloutDuration(r.Annotations, field.NewPath("metadata", "annotations"))...)
	return append(errs, validateTraffic(r.Spec.Traffic, field.NewPath("spec", "traffic"), false)...)
}
