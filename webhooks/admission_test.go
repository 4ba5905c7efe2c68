package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func serviceHooks() hooks[*servingv1.Service] {
	return hooks[*servingv1.Service]{
		kind: "Service", cfg: Static(DefaultConfig()), newObj: func() *servingv1.Service { return &servingv1.Service{} },
		defaults: defaultService, validate: validateService,
		warn: func(s *servingv1.Service) []string { return unknownAutoscalingAnnotations(s.Spec.Template.Annotations) },
	}
}

func requestContext(t *testing.T, op admissionv1.Operation, user string, old runtime.Object) context.Context {
	t.Helper()
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: op, UserInfo: authenticationv1.UserInfo{Username: user},
	}}
	if old != nil {
		raw, err := json.Marshal(old)
		if err != nil {
			t.Fatal(err)
		}
		req.OldObject = runtime.RawExtension{Raw: raw}
	}
	return admission.NewContextWithRequest(context.Background(), req)
}

func TestHooksDefaultReadsTheRequest(t *testing.T) {
	h := serviceHooks()
	created := service("hello", bareSpec(corev1.Container{Image: image}))
	if err := h.Default(requestContext(t, admissionv1.Create, "alice", nil), created); err != nil {
		t.Fatal(err)
	}
	updated := created.DeepCopy()
	updated.Annotations = nil // an apply that does not carry them
	updated.Spec.Template.Spec.Containers[0].Image = "v2"
	if err := h.Default(requestContext(t, admissionv1.Update, "bob", created), updated); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{servingv1.CreatorAnnotation: "alice", servingv1.UpdaterAnnotation: "bob"}
	if diff := cmp.Diff(want, updated.Annotations); diff != "" {
		t.Errorf("annotations after update (-want +got):\n%s", diff)
	}
	if err := h.Default(context.Background(), updated); err == nil {
		t.Error("Default without an admission request: got nil error")
	}
}

// A refusal is Knative's: BadRequest, "validation failed: " and the
// errors as apis.FieldError renders them; each field stays a cause.
func TestHooksValidateRefusesAsKnative(t *testing.T) {
	h := serviceHooks()
	s := service("hello", defaultedSpec(), latest(100))
	s.Spec.Template.Annotations = map[string]string{
		"autoscaling.knative.dev/min-scale": "5", "autoscaling.knative.dev/max-scale": "2", "autoscaling.knative.dev/minscale": "1",
	}
	warnings, err := h.ValidateCreate(context.Background(), s)
	if !apierrors.IsBadRequest(err) {
		t.Fatalf("ValidateCreate error = %v, want a BadRequest status", err)
	}
	wantMsg := "validation failed: invalid value: 5: spec.template.metadata.annotations[autoscaling.knative.dev/min-scale]\n" +
		"min-scale=5 is greater than max-scale=2"
	if diff := cmp.Diff(wantMsg, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("ValidateCreate error = %#v, want a status with details", err)
	}
	wantCauses := []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.template.metadata.annotations[autoscaling.knative.dev/min-scale]",
		Message: `Invalid value: "5": min-scale=5 is greater than max-scale=2`}}
	if diff := cmp.Diff(wantCauses, status.Status().Details.Causes); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(admission.Warnings{"unknown annotation autoscaling.knative.dev/minscale is ignored"}, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}

	valid := service("hello", defaultedSpec(), latest(100))
	if _, err := h.ValidateUpdate(context.Background(), valid, valid.DeepCopy()); err != nil {
		t.Errorf("ValidateUpdate of a valid Service: %v", err)
	}
	if _, err := h.ValidateDelete(context.Background(), s); err != nil {
		t.Errorf("ValidateDelete: %v", err)
	}
}
