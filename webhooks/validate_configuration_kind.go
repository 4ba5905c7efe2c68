package webhooks

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// validateConfiguration is Knative's Configuration.Validate; old is nil on
// create.
func validateConfiguration(c, old *servingv1.Configuration, cfg Config) field.ErrorList {
	template := field.NewPath("spec", "template")
	errs := validateParentMetadata(c.ObjectMeta)
	errs = append(errs, validateTemplate(c.Spec.Template, c.ObjectMeta, template, cfg)...)
	if old != nil {
		errs = append(errs, validateNameChange(old.Spec.Template, c.Spec.Template, template)...)
	}
	return errs
}
