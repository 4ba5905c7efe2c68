package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
