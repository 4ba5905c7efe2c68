package webhooks

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// validateService is Knative's Service.Validate; old is nil on create.
func validateService(s, old *servingv1.Service, cfg Config) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateParentMetadata(s.ObjectMeta)
	errs = append(errs, validateVisibility(s.Labels, field.NewPath("metadata", "labels"))...)
	errs = append(errs, validateHTTPProtocol(s.Annotations, field.NewPath("metadata", "annotations"))...)
	errs = append(errs, validateRolloutDuration(s.Annotations, field.NewPath("metadata", "annotations"))...)
	errs = append(errs, validateTemplate(s.Spec.Template, s.ObjectMeta, spec.Child("template"), cfg)...)
	errs = append(errs, validateTraffic(s.Spec.Traffic, spec.Child("traffic"), true)...)
	if old != nil {
		errs = append(errs, validateNameChange(old.Spec.Template, s.Spec.Template, spec.Child("template"))...)
	}
	return errs
}
