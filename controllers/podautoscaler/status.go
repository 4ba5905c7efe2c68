package podautoscaler

import (
	"fmt"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
)

// MarkStatus records the scale and derives the conditions: Active while
// replicas are ready (False once scaled to zero on purpose),
// ScaleTargetInitialized once the first replicas became ready, SKSReady
// from the SKS (False when it failed). Pure, table-tested.
func MarkStatus(s *autoscalingv1alpha1.PodAutoscalerStatus, desired, ready int32, sks *networkingv1alpha1.ServerlessService) {
	conds := autoscalingv1alpha1.PodAutoscalerConditions.Manage(&s.Status)
	s.DesiredScale, s.ActualScale = &desired, &ready
	s.ServiceName, s.MetricsServiceName = sks.Status.ServiceName, sks.Status.PrivateServiceName

	initialized := s.GetCondition(autoscalingv1alpha1.PodAutoscalerConditionScaleTargetInitialized).IsTrue()
	switch {
	case ready > 0:
		conds.MarkTrue(autoscalingv1alpha1.PodAutoscalerConditionActive)
		conds.MarkTrue(autoscalingv1alpha1.PodAutoscalerConditionScaleTargetInitialized)
	case desired == 0 && initialized:
		conds.MarkFalse(autoscalingv1alpha1.PodAutoscalerConditionActive, "NoTraffic", "the revision is scaled to zero; the activator will wake it")
	case initialized:
		conds.MarkUnknown(autoscalingv1alpha1.PodAutoscalerConditionActive, "Activating", fmt.Sprintf("waiting for %d replica(s) to become ready", desired))
	default:
		conds.MarkUnknown(autoscalingv1alpha1.PodAutoscalerConditionActive, "Queued", "waiting for the first replica")
		conds.MarkUnknown(autoscalingv1alpha1.PodAutoscalerConditionScaleTargetInitialized, "Queued", "waiting for the first replica")
	}
	switch sksReady := sks.Status.GetCondition(duckv1.ConditionReady); {
	case sksReady.IsTrue() && sks.Status.ObservedGeneration == sks.Generation:
		conds.MarkTrue(autoscalingv1alpha1.PodAutoscalerConditionSKSReady)
	case sksReady.IsFalse():
		// The SKS failed (its Services cannot be created): nothing reaches
		// the replicas, whatever generation it last saw.
		conds.MarkFalse(autoscalingv1alpha1.PodAutoscalerConditionSKSReady, sksReady.Reason, sksReady.Message)
	case sksReady != nil:
		conds.MarkUnknown(autoscalingv1alpha1.PodAutoscalerConditionSKSReady, sksReady.Reason, sksReady.Message)
	default:
		conds.MarkUnknown(autoscalingv1alpha1.PodAutoscalerConditionSKSReady, "Pending", "")
	}
}
