package podautoscaler

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/knitops/knit/api/autoscaling"
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
	unreachable := pa.Spec.Reachability == autoscalingv1alpha1.ReachabilityUnreachable
	min := annotationInt(pa, autoscaling.MinScaleAnnotation, 0)
	if unreachable {
		min = 0 // min-scale holds only while a route can reach the revision
	}
	initial := InitialReady(annotationInt(pa, autoscaling.InitialScaleAnnotation, 1), min, annotationInt(pa, autoscaling.MaxScaleAnnotation, 0))
	desired := initial
	if unreachable {
		desired = 0
	}
	mode := networkingv1alpha1.SKSOperationModeServe
	if desired == 0 {
		mode = networkingv1alpha1.SKSOperationModeProxy
	}
	return Recommendation{DesiredScale: desired, Mode: mode, InitialReady: initial}
}

// InitialReady is Knative's activeThreshold before initialization: the
// ready replicas a Revision needs, max(min-scale, initial-scale), at most
// its max-scale (0: none).
func InitialReady(initial, min, max int32) int32 {
	n := initial
	if min > n {
		n = min
	}
	if max > 0 && n > max {
		n = max
	}
	return n
}

// annotationInt is the PodAutoscaler's annotation k, or def when it is
// absent or refused (admission refused it already, unless the cluster's
// limits changed since).
func annotationInt(pa *autoscalingv1alpha1.PodAutoscaler, k autoscaling.IntKey, def int32) int32 {
	if n, ok, err := k.Parse(pa.Annotations); ok && err == nil {
		return n
	}
	return def
}

// Forget implements Recommender; a static recommender keeps nothing.
func (StaticRecommender) Forget(types.NamespacedName) {}
