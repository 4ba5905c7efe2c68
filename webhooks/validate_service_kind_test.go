package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestValidateService(t *testing.T) {
	valid := func() *servingv1.Service { return service("hello", defaultedSpec(), latest(100)) }
	with := func(f func(*servingv1.Service)) *servingv1.Service {
		s := valid()
		f(s)
		return s
	}
	tests := []struct {
		name     string
		svc, old *servingv1.Service
		want     []string
	}{{
		name: "a defaulted Service",
		svc:  valid(),
	}, {
		name: "every part is checked, with paths from the object's root",
		svc: with(func(s *servingv1.Service) {
			s.Name = "Hello"
			s.Annotations = map[string]string{"autoscaling.knative.dev/max-scale": "3"}
			s.Labels = map[string]string{"networking.knative.dev/visibility": "internal"}
			s.Spec.Template.Annotations = map[string]string{"autoscaling.knative.dev/min-scale": "5", "autoscaling.knative.dev/max-scale": "2"}
			s.Spec.Template.Spec.Containers[0].TTY = true
			s.Spec.Traffic[0].Percent = ptr.To[int64](90)
		}),
		want: []string{
			"invalid value: Hello: metadata.name\nnot a DNS 1035 label: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
			"autoscaling annotations must be put under \"spec.template.metadata.annotations\" to work: metadata.annotations[autoscaling.knative.dev/max-scale]",
			"invalid value: internal: metadata.labels[networking.knative.dev/visibility]\nsupported values: \"cluster-local\"",
			"invalid value: 5: spec.template.metadata.annotations[autoscaling.knative.dev/min-scale]\nmin-scale=5 is greater than max-scale=2",
			"must not set the field(s): spec.template.spec.containers[0].tty",
			"invalid value: 90: spec.traffic\ntraffic targets' percents add up to 90; they must add up to 100",
		},
	}, {
		name: "a template name must carry the Service's name",
		svc:  with(func(s *servingv1.Service) { s.Spec.Template.Name = "other-v1" }),
		want: []string{"invalid value: other-v1: spec.template.metadata.name\nmust have prefix \"hello-\""},
	}, {
		name: "an update that changes a named template without renaming it",
		old:  with(func(s *servingv1.Service) { s.Spec.Template.Name = "hello-v1" }),
		svc: with(func(s *servingv1.Service) {
			s.Spec.Template.Name = "hello-v1"
			s.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "TARGET", Value: "knit"}}
		}),
		want: []string{"invalid value: hello-v1: spec.template.metadata.name\nSaw the following changes without a name change (-old +new): spec.template.spec.containers[0].env[0]: -<none> +{\"name\":\"TARGET\",\"value\":\"knit\"}; give the template a new name, or remove it to have one generated"},
	}, {
		name: "an update that renames the template with the change",
		old:  with(func(s *servingv1.Service) { s.Spec.Template.Name = "hello-v1" }),
		svc: with(func(s *servingv1.Service) {
			s.Spec.Template.Name = "hello-v2"
			s.Spec.Template.Spec.Containers[0].Image = "v2"
		}),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateService(tc.svc, tc.old, DefaultConfig()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateServiceRolloutDuration: a Service's rollout-duration, which
// its Route inherits, is checked as a Route's is.
func TestValidateServiceRolloutDuration(t *testing.T) {
	for v, want := range map[string]int{"60s": 0, "60": 0, "soon": 1, "-5s": 1} {
		s := service("hello", defaultedSpec(), latest(100))
		s.Annotations = map[string]string{"serving.knative.dev/rollout-duration": v}
		if got := validateService(s, nil, DefaultConfig()); len(got) != want {
			t.Errorf("rollout-duration %q: errors %v, want %d", v, messages(got), want)
		}
	}
}
