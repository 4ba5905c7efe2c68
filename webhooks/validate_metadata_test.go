package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateNoAutoscalingAnnotations(t *testing.T) {
	got := messages(validateNoAutoscalingAnnotations(map[string]string{
		"autoscaling.knative.dev/min-scale": "1", "autoscaling.knative.dev/class": "kpa.autoscaling.knative.dev", "team": "web",
	}, field.NewPath("metadata", "annotations")))
	want := []string{
		"autoscaling annotations must be put under \"spec.template.metadata.annotations\" to work: metadata.annotations[autoscaling.knative.dev/class]",
		"autoscaling annotations must be put under \"spec.template.metadata.annotations\" to work: metadata.annotations[autoscaling.knative.dev/min-scale]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestValidateVisibility(t *testing.T) {
	p := field.NewPath("metadata", "labels")
	if errs := validateVisibility(map[string]string{"networking.knative.dev/visibility": "cluster-local"}, p); len(errs) != 0 {
		t.Errorf("cluster-local: %v", errs)
	}
	got := messages(validateVisibility(map[string]string{"networking.knative.dev/visibility": "private"}, p))
	want := []string{"invalid value: private: metadata.labels[networking.knative.dev/visibility]\nsupported values: \"cluster-local\""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
