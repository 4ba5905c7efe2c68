package webhooks

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/knitops/knit/api/autoscaling"
	"github.com/knitops/knit/api/serving/queuesidecar"
)

// validateAutoscalingAnnotations is Knative's autoscaling.ValidateAnnotations
// over a Revision's (or template's) annotations at path, through the
// parser the KPA reads them with (package autoscaling), under the cluster's
// limits; errors name the key as the user spelled it.
func validateAutoscalingAnnotations(anns map[string]string, path *field.Path, cfg Config) field.ErrorList {
	_, refused := autoscaling.Parse(anns, autoscaling.Limits{MaxScaleLimit: cfg.MaxScaleLimit, AllowZeroInitialScale: cfg.AllowZeroInitialScale})
	var errs field.ErrorList
	for _, e := range append(autoscaling.Duplicates(anns), refused...) {
		errs = append(errs, fieldError(path, e))
	}
	return errs
}

// fieldError is a refusal as kubectl shows it: Forbidden, Unsupported
// value with the supported ones, or Invalid value with what is accepted.
func fieldError(path *field.Path, e *autoscaling.Error) *field.Error {
	switch {
	case e.Forbidden:
		return field.Forbidden(path.Key(e.Key), e.Detail)
	case e.Supported != nil:
		return field.NotSupported(path.Key(e.Key), e.Value, e.Supported)
	}
	return field.Invalid(path.Key(e.Key), e.Value, e.Detail)
}

// validateQueueSidecarAnnotations refuses queue.sidecar.serving.knative.dev
// annotations the Revision reconciler could not apply, through the same
// parser, so a typo is an error at the Service and not a queue-proxy
// silently sized otherwise.
func validateQueueSidecarAnnotations(anns map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, p := range queuesidecar.Validate(anns) {
		errs = append(errs, field.Invalid(path.Key(p.Key), p.Value, p.Detail))
	}
	return errs
}
