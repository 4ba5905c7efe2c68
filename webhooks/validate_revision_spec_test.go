package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestValidateRevisionSpec(t *testing.T) {
	const p = "spec.template.spec"
	with := func(f func(*servingv1.RevisionSpec)) servingv1.RevisionSpec {
		s := defaultedSpec()
		f(&s)
		return s
	}
	tests := []struct {
		name string
		spec servingv1.RevisionSpec
		want []string
	}{{
		name: "defaulted",
		spec: defaultedSpec(),
	}, {
		name: "at the limits",
		spec: with(func(s *servingv1.RevisionSpec) {
			s.ContainerConcurrency, s.TimeoutSeconds = ptr.To[int64](1000), ptr.To[int64](600)
			s.ResponseStartTimeoutSeconds, s.IdleTimeoutSeconds = ptr.To[int64](600), ptr.To[int64](600)
			s.AutomountServiceAccountToken, s.ServiceAccountName = ptr.To(false), "builder"
		}),
	}, {
		name: "over the limits",
		spec: with(func(s *servingv1.RevisionSpec) {
			s.ContainerConcurrency, s.TimeoutSeconds = ptr.To[int64](1001), ptr.To[int64](601)
			s.IdleTimeoutSeconds = ptr.To[int64](-1)
		}),
		want: []string{
			"invalid value: 1001: " + p + ".containerConcurrency\nmust be between 0 and 1000 (config-defaults container-concurrency-max-limit); 0 means no limit",
			"invalid value: 601: " + p + ".timeoutSeconds\nmust be between 0 and 600 (config-defaults max-revision-timeout-seconds)",
			"invalid value: -1: " + p + ".idleTimeoutSeconds\nmust be between 0 and 600 (config-defaults max-revision-timeout-seconds)",
		},
	}, {
		name: "the first byte cannot wait longer than the whole request",
		spec: with(func(s *servingv1.RevisionSpec) {
			s.TimeoutSeconds, s.ResponseStartTimeoutSeconds = ptr.To[int64](30), ptr.To[int64](31)
		}),
		want: []string{"invalid value: 31: " + p + ".responseStartTimeoutSeconds\nmust be between 0 and 30, the request timeout (timeoutSeconds)"},
	}, {
		name: "pod settings Knative restricts",
		spec: with(func(s *servingv1.RevisionSpec) {
			s.AutomountServiceAccountToken, s.ServiceAccountName = ptr.To(true), "Builder"
		}),
		want: []string{
			"invalid value: Builder: " + p + ".serviceAccountName\na lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
			"may only be set to false: " + p + ".automountServiceAccountToken",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateRevisionSpec(tc.spec, field.NewPath("spec", "template", "spec"), DefaultConfig()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
