package webhooks

import (
	"context"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// hooks adapts one kind's pure defaulting and validation to
// controller-runtime's admission.Defaulter and admission.Validator. In the
// pure functions old is nil on create.
type hooks[T client.Object] struct {
	kind     string
	cfg      Source
	newObj   func() T
	defaults func(obj, old T, user string, cfg Config)
	validate func(obj, old T, cfg Config) field.ErrorList
	// check asks the API server (a dry run) once validate passed; nil
	// for kinds that need none.
	check func(ctx context.Context, obj, old T, cfg Config) field.ErrorList
	warn  func(obj T) []string
}

// Default defaults obj, reading the user and, on update, the stored object
// from the admission request.
func (h hooks[T]) Default(ctx context.Context, obj T) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return fmt.Errorf("defaulting %s: %w", h.kind, err)
	}
	var old T
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old = h.newObj()
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return fmt.Errorf("defaulting %s: decode the stored object: %w", h.kind, err)
		}
	}
	h.defaults(obj, old, req.UserInfo.Username, h.cfg())
	return nil
}

// ValidateCreate refuses an invalid new object.
func (h hooks[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	var none T
	return h.result(obj, h.validateAll(ctx, obj, none))
}

// ValidateUpdate refuses an invalid change.
func (h hooks[T]) ValidateUpdate(ctx context.Context, old, obj T) (admission.Warnings, error) {
	return h.result(obj, h.validateAll(ctx, obj, old))
}

// validateAll runs the pure validation, then, if it passed, the check
// that asks the API server: an invalid object costs no round trip.
func (h hooks[T]) validateAll(ctx context.Context, obj, old T) field.ErrorList {
	cfg := h.cfg()
	errs := h.validate(obj, old, cfg)
	if len(errs) == 0 && h.check != nil {
		errs = h.check(ctx, obj, old, cfg)
	}
	return errs
}

// ValidateDelete allows every delete; the webhooks are not registered for
// it anyway.
func (h hooks[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// result turns field errors into the refusal Knative's webhook gives: a
// BadRequest whose message is "validation failed: " and the errors worded
// and combined as Knative's apis.FieldError (knativeMessage), which
// clients written for Knative match on. The details keep each field path
// as a cause, as an Invalid status would, for tools that read them.
func (h hooks[T]) result(obj T, errs field.ErrorList) (admission.Warnings, error) {
	var warnings admission.Warnings
	if h.warn != nil {
		warnings = h.warn(obj)
	}
	if len(errs) == 0 {
		return warnings, nil
	}
	refused := apierrors.NewBadRequest("validation failed: " + knativeMessage(errs))
	refused.ErrStatus.Details = &metav1.StatusDetails{Group: servingv1.GroupVersion.Group, Kind: h.kind, Name: obj.GetName()}
	for _, e := range errs {
		refused.ErrStatus.Details.Causes = append(refused.ErrStatus.Details.Causes, metav1.StatusCause{
			Type: metav1.CauseType(e.Type), Message: e.ErrorBody(), Field: e.Field,
		})
	}
	return warnings, refused
}
