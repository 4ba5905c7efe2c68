package webhooks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestKnativeMessage: a list renders as Knative's apis.FieldError does
// when its errors are combined with Also — one line per message and
// details, paths of equal errors merged and sorted, ordered by message.
func TestKnativeMessage(t *testing.T) {
	spec := field.NewPath("spec", "template", "spec")
	tests := []struct {
		name string
		errs field.ErrorList
		want string
	}{{
		name: "invalid value with details",
		errs: field.ErrorList{field.Invalid(spec.Child("timeoutSeconds"), int64(601), "must be between 0 and 600")},
		want: "invalid value: 601: spec.template.spec.timeoutSeconds\nmust be between 0 and 600",
	}, {
		name: "disallowed fields merge their paths, sorted",
		errs: field.ErrorList{
			field.Forbidden(spec.Child("containers").Index(0).Child("tty"), "must not set the field(s)"),
			field.Forbidden(spec.Child("containers").Index(0).Child("stdin"), "must not set the field(s)"),
		},
		want: "must not set the field(s): spec.template.spec.containers[0].stdin, spec.template.spec.containers[0].tty",
	}, {
		name: "missing field, no details",
		errs: field.ErrorList{field.Required(spec.Child("containers").Index(0).Child("image"), "")},
		want: "missing field(s): spec.template.spec.containers[0].image",
	}, {
		name: "several errors, ordered by message",
		errs: field.ErrorList{
			field.Required(spec.Child("containers").Index(0).Child("image"), ""),
			field.NotSupported(spec.Child("containers").Index(0).Child("ports").Index(0).Child("protocol"), "UDP", []string{"TCP"}),
			field.Forbidden(spec.Child("containers").Index(0).Child("readinessProbe"), "only the container that serves requests may be probed"),
		},
		want: "invalid value: UDP: spec.template.spec.containers[0].ports[0].protocol\nsupported values: \"TCP\"\n" +
			"missing field(s): spec.template.spec.containers[0].image\n" +
			"only the container that serves requests may be probed: spec.template.spec.containers[0].readinessProbe",
	}, {
		name: "a forbidden field with a reason keeps it as details",
		errs: field.ErrorList{field.Forbidden(field.NewPath("spec", "traffic").Index(1).Child("url"), "must not set the field(s): the URL is reported in status")},
		want: "must not set the field(s): spec.traffic[1].url\nthe URL is reported in status",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, knativeMessage(tc.errs)); diff != "" {
				t.Errorf("knativeMessage (-want +got):\n%s", diff)
			}
		})
	}
}

// Knative's conformance test TestServiceAccountValidation looks for this
// text in the refusal of a Service whose serviceAccountName is no DNS-1123
// subdomain.
func TestServiceAccountRefusalAsKnative(t *testing.T) {
	s := service("hello", defaultedSpec(), latest(100))
	s.Spec.Template.Spec.ServiceAccountName = "foo@bar.baz"
	_, err := serviceHooks().ValidateCreate(t.Context(), s)
	if err == nil {
		t.Fatal("ValidateCreate of serviceAccountName foo@bar.baz: got nil error")
	}
	want := "foo@bar.baz: spec.template.spec.serviceAccountName" + "\n" + strings.Join(validation.IsDNS1123Subdomain("foo@bar.baz"), "\n")
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error = %q, want it to contain %q", err.Error(), want)
	}
}
