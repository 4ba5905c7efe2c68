package podautoscaler

import (
	"context"
	"strconv"

	"k8s.io/apimachinery/pkg/types"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
)

// StaticRecommender keeps every Revision at a fixed scale — its
// min-scale, at least its initial scale (default 1), at most its max-scale
// — in Serve mode. It is knit without an autoscaler: predictable, never at
// zero while reachable. A Revision no Route can reach goes to zero
// whatever its min-scale, as Knative's KPA takes it.
type StaticRecommender struct{}

// Recommend implements Recommender.
func (StaticRecommender) Recommend(_ context.Context, pa *autoscalingv1alpha1.PodAutoscaler, _, _ int32) Recommendation {
	desired := annotationInt(pa, 1, "autoscaling.knative.dev/initial-scale", "autoscaling.knative.dev/initialScale")
	if min := annotationInt(pa, 0, "autoscaling.knative.dev/min-scale", "autoscaling.knative.dev/minScale"); min > desired {
		desired = min
	}
	if max := annotationInt(pa, 0, "autoscaling.knative.dev/max-scale", "autoscaling.knative.dev/maxScale"); max > 0 && desired > max {
		desired = max
	}
	if pa.Spec.Reachability == autoscalingv1alpha1.ReachabilityUnreachable {
		desired = 0
	}
	mode := networkingv1alpha1.SKSOperationModeServe
	if desired == 0 {
		mode = networkingv1alpha1.SKSOperationModeProxy
	}
	return Recommendation{DesiredScale: desired, Mode: mode}
}

func annotationInt(pa *autoscalingv1alpha1.PodAutoscaler, def int32, keys ...string) int32 {
	for _, k := range keys {
		if v, ok := pa.Annotations[k]; ok {
			if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 0 {
				return int32(n)
			}
		}
	}
	return def
}

// Forget implements Recommender; a static recommender keeps nothing.
func (StaticRecommender) Forget(types.NamespacedName) {}
