package podautoscaler

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
)

// The static recommender reads the scales through the annotations'
// parser: either spelling, a refused value as if absent.
func TestStaticRecommender(t *testing.T) {
	tests := []struct {
		name         string
		anns         map[string]string
		reachability autoscalingv1alpha1.ReachabilityType
		want         Recommendation
	}{
		{"no annotation: one replica", nil, "", Recommendation{DesiredScale: 1, Mode: networkingv1alpha1.SKSOperationModeServe, InitialReady: 1}},
		{"initial-scale", map[string]string{"autoscaling.knative.dev/initial-scale": "3"}, "",
			Recommendation{DesiredScale: 3, Mode: networkingv1alpha1.SKSOperationModeServe, InitialReady: 3}},
		{"initial-scale 0 idles in Proxy mode", map[string]string{"autoscaling.knative.dev/initialScale": "0"}, "",
			Recommendation{DesiredScale: 0, Mode: networkingv1alpha1.SKSOperationModeProxy}},
		{"min-scale above initial-scale", map[string]string{"autoscaling.knative.dev/minScale": "4", "autoscaling.knative.dev/initial-scale": "2"}, "",
			Recommendation{DesiredScale: 4, Mode: networkingv1alpha1.SKSOperationModeServe, InitialReady: 4}},
		{"max-scale caps", map[string]string{"autoscaling.knative.dev/min-scale": "4", "autoscaling.knative.dev/max-scale": "2"}, "",
			Recommendation{DesiredScale: 2, Mode: networkingv1alpha1.SKSOperationModeServe, InitialReady: 2}},
		{"max-scale 0 is unlimited", map[string]string{"autoscaling.knative.dev/min-scale": "4", "autoscaling.knative.dev/maxScale": "0"}, "",
			Recommendation{DesiredScale: 4, Mode: networkingv1alpha1.SKSOperationModeServe, InitialReady: 4}},
		{"refused values count as absent", map[string]string{"autoscaling.knative.dev/initial-scale": "-1", "autoscaling.knative.dev/min-scale": "two"}, "",
			Recommendation{DesiredScale: 1, Mode: networkingv1alpha1.SKSOperationModeServe, InitialReady: 1}},
		{"unreachable goes to zero whatever its min-scale", map[string]string{"autoscaling.knative.dev/min-scale": "4"}, autoscalingv1alpha1.ReachabilityUnreachable,
			Recommendation{DesiredScale: 0, Mode: networkingv1alpha1.SKSOperationModeProxy, InitialReady: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pa := &autoscalingv1alpha1.PodAutoscaler{}
			pa.Annotations, pa.Spec.Reachability = tc.anns, tc.reachability
			if diff := cmp.Diff(tc.want, StaticRecommender{}.Recommend(context.Background(), pa, 0, 0)); diff != "" {
				t.Errorf("Recommend (-want +got):\n%s", diff)
			}
		})
	}
}

// InitialReady is Knative's activeThreshold before initialization.
func TestInitialReady(t *testing.T) {
	for _, tc := range []struct{ initial, min, max, want int32 }{
		{1, 0, 0, 1},
		{0, 0, 0, 0}, // initial-scale 0: initialized at zero
		{0, 2, 0, 2},
		{3, 1, 0, 3},
		{3, 5, 4, 4},
		{0, 0, 3, 0},
	} {
		if got := InitialReady(tc.initial, tc.min, tc.max); got != tc.want {
			t.Errorf("InitialReady(%d, %d, %d) = %d, want %d", tc.initial, tc.min, tc.max, got, tc.want)
		}
	}
}
