package podautoscaler

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
)

// Recommendation is the autoscaler's answer for one Revision.
type Recommendation struct {
	// DesiredScale is the replica count wanted, bounds already applied.
	DesiredScale int32
	// Mode is where the public endpoints should point.
	Mode networkingv1alpha1.ServerlessServiceOperationMode
	// NumActivators to put in the path in Proxy mode.
	NumActivators int32
	// InitialReady is how many ready replicas a new Revision needs
	// before its scale target counts as initialized: max(min-scale,
	// initial-scale), as Knative's activeThreshold. 0 (initial-scale 0
	// allowed, min-scale 0) initializes it at once, at zero: it is Ready
	// with no replica and its first request starts one.
	InitialReady int32
	// RequeueAfter, when positive, is when the answer may change with
	// time alone (a grace period ending).
	RequeueAfter time.Duration
}

// Recommender is the seam to the autoscaler: the KPA in production, a
// fixed scale where no autoscaler runs. It sees the PodAutoscaler, the
// ready and current replica counts, and answers what to do now.
type Recommender interface {
	Recommend(ctx context.Context, pa *autoscalingv1alpha1.PodAutoscaler, ready, current int32) Recommendation
	// Forget drops what the recommender keeps for a deleted PodAutoscaler.
	Forget(pa types.NamespacedName)
}
