package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAutoscalingKeyGet(t *testing.T) {
	tests := []struct {
		name       string
		anns       map[string]string
		key, value string
		ok         bool
	}{{
		name: "absent",
	}, {
		name: "current spelling",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "1"},
		key:  "autoscaling.knative.dev/min-scale", value: "1", ok: true,
	}, {
		name: "legacy spelling",
		anns: map[string]string{"autoscaling.knative.dev/minScale": "2"},
		key:  "autoscaling.knative.dev/minScale", value: "2", ok: true,
	}, {
		name: "both: the current spelling wins, as in Knative",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "1", "autoscaling.knative.dev/minScale": "2"},
		key:  "autoscaling.knative.dev/min-scale", value: "1", ok: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, value, ok := minScaleKey.get(tc.anns)
			if diff := cmp.Diff([]any{tc.key, tc.value, tc.ok}, []any{key, value, ok}); diff != "" {
				t.Errorf("get (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownAutoscalingAnnotations(t *testing.T) {
	got := unknownAutoscalingAnnotations(map[string]string{
		"autoscaling.knative.dev/min-scale": "1", "autoscaling.knative.dev/minScale": "1",
		"autoscaling.knative.dev/minscale": "1", "autoscaling.knative.dev/max-scal": "2", "example.com/x": "y",
	})
	want := []string{
		"unknown annotation autoscaling.knative.dev/max-scal is ignored",
		"unknown annotation autoscaling.knative.dev/minscale is ignored",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
