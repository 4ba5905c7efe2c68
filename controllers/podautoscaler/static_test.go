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
		{"no annotation: one replica", nil, "", Recommendation{DesiredScale: 1, Mode: networkingv1alpha1.SKSOperationModeServe}},
		{"initial-scale", map[string]string{"autoscaling.knative.dev/initial-scale": "3"}, "",
			Recommendation{DesiredScale: 3, Mode: networkingv1alpha1.SKSOperationModeServe}},
		{"initial-scale 0 idles in Proxy mode", map[string]string{"autoscaling.knative.dev/initialScale": "0"}, "",
			Recommendation{DesiredScale: 0, Mode: networkingv1alpha1.SKSOperationModeProxy}},
		{"min-scale above initial-scale", map[string]string{"autoscaling.knative.dev/minScale": "4", "autoscaling.knative.dev/initial-scale": "2"}, "",
			Recommendation{DesiredScale: 4, Mode: networkingv1alpha1.SKSOperationModeServe}},
		{"max-scale caps", map[string]string{"autoscaling.knative.dev/min-scale": "4", "autoscaling.knative.dev/max-scale": "2"}, "",
			Recommendation{DesiredScale: 2, Mode: networkingv1alpha1.SKSOperationModeServe}},
		{"max-scale 0 is unlimited", map[string]string{"autoscaling.knative.dev/min-scale": "4", "autoscaling.knative.dev/maxScale": "0"}, "",
			Recommendation{DesiredScale: 4, Mode: networkingv1alpha1.SKSOperationModeServe}},
		{"refused values count as absent", map[string]string{"autoscaling.knative.dev/initial-scale": "-1", "autoscaling.knative.dev/min-scale": "two"}, "",
			Recommendation{DesiredScale: 1, Mode: networkingv1alpha1.SKSOperationModeServe}},
		{"unreachable goes to zero whatever its min-scale", map[string]string{"autoscaling.knative.dev/min-scale": "4"}, autoscalingv1alpha1.ReachabilityUnreachable,
			Recommendation{DesiredScale: 0, Mode: networkingv1alpha1.SKSOperationModeProxy}},
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
