package podautoscaler

import (
	"context"

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
}

// Recommender is the seam to the autoscaler: the KPA in production, a
// fixed scale where no autoscaler runs. It sees the PodAutoscaler and the
// ready replica count and answers what to do now.
type Recommender interface {
	Recommend(ctx context.Context, pa *autoscalingv1alpha1.PodAutoscaler, ready int32) Recommendation
}
