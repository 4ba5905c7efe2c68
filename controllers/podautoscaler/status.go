package podautoscaler

import (
	"fmt"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
)

// MarkStatus records the scale and derives the conditions: Active while
// replicas are ready (False once scaled to zero on purpose),
// ScaleTargetInitialized once rec.InitialReady replicas were ready (at
// once when that is 0: a Revision at initial-scale 0 is Ready at zero, as
// in Knative) and the SKS has its Service, SKSReady from the SKS (False
// when it failed). Pure, table-tested.
func MarkStatus(s *autoscalingv1alpha1.PodAutoscalerStatus, rec Recommendation, ready int32, sks *networkingv1alpha1.ServerlessService) {
	desired := rec.DesiredScale
	s.DesiredScale, s.ActualScale = &desired, &ready
	s.ServiceName, s.MetricsServiceName = sks.Status.ServiceName, sks.Status.PrivateServiceName

	initialized := s.GetCondition(autoscalingv1alpha1.PodAutoscalerConditionScaleTargetInitialized).IsTrue()
	switch {
	case initialized:
	case ready >= rec.InitialReady && (ready > 0 || s.ServiceName != ""):
		s.MarkScaleTargetInitialized()
		initialized = true
	default:
		s.MarkScaleTargetNotInitialized(autoscalingv1alpha1.ReasonQueued, waitingForInitial(rec.InitialReady, ready))
	}
	switch {
	case ready > 0:
		s.MarkActive()
	case desired == 0 && initialized:
		s.MarkInactive(autoscalingv1alpha1.ReasonNoTraffic, "the revision is scaled to zero; the activator will wake it")
	case initialized:
		s.MarkActivating(autoscalingv1alpha1.ReasonActivating, fmt.Sprintf("waiting for %d replica(s) to become ready", desired))
	default:
		s.MarkActivating(autoscalingv1alpha1.ReasonQueued, waitingForInitial(1, 0))
	}
	switch sksReady := sks.Status.GetCondition(duckv1.ConditionReady); {
	case sksReady.IsTrue() && sks.Status.ObservedGeneration == sks.Generation:
		s.MarkSKSReady()
	case sksReady.IsFalse():
		// The SKS failed (its Services cannot be created): nothing reaches
		// the replicas, whatever generation it last saw.
		s.MarkSKSFailed(sksReady.Reason, sksReady.Message)
	case sksReady != nil:
		s.MarkSKSNotReady(sksReady.Reason, sksReady.Message)
	default:
		s.MarkSKSNotReady(autoscalingv1alpha1.ReasonPending, "")
	}
}

// waitingForInitial says what a Revision not yet initialized waits for.
func waitingForInitial(initial, ready int32) string {
	if initial <= 1 {
		return "waiting for the first replica"
	}
	return fmt.Sprintf("waiting for %d ready replicas, the initial scale (%d so far)", initial, ready)
}
