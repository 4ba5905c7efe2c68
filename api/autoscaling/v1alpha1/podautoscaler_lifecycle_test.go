package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

func TestPodAutoscalerLifecycle(t *testing.T) {
	type cond struct {
		Status          corev1.ConditionStatus
		Reason, Message string
	}
	tests := []struct {
		name            string
		mark            func(*PodAutoscalerStatus)
		condition       duckv1.ConditionType
		want, wantReady cond
	}{{
		name: "queued",
		mark: func(ps *PodAutoscalerStatus) {
			ps.MarkActivating(ReasonQueued, "first")
			ps.MarkScaleTargetNotInitialized(ReasonQueued, "first")
		},
		condition: PodAutoscalerConditionScaleTargetInitialized,
		want:      cond{corev1.ConditionUnknown, ReasonQueued, "first"},
		wantReady: cond{corev1.ConditionUnknown, ReasonQueued, "first"},
	}, {
		name:      "active with its SKS ready",
		mark:      func(ps *PodAutoscalerStatus) { ps.MarkActive(); ps.MarkScaleTargetInitialized(); ps.MarkSKSReady() },
		condition: PodAutoscalerConditionActive,
		want:      cond{Status: corev1.ConditionTrue},
		wantReady: cond{Status: corev1.ConditionTrue},
	}, {
		name: "scaled to zero",
		mark: func(ps *PodAutoscalerStatus) {
			ps.MarkScaleTargetInitialized()
			ps.MarkSKSReady()
			ps.MarkInactive(ReasonNoTraffic, "at zero")
		},
		condition: PodAutoscalerConditionActive,
		want:      cond{corev1.ConditionFalse, ReasonNoTraffic, "at zero"},
		wantReady: cond{corev1.ConditionFalse, ReasonNoTraffic, "at zero"},
	}, {
		name: "SKS failed",
		mark: func(ps *PodAutoscalerStatus) {
			ps.MarkActive()
			ps.MarkScaleTargetInitialized()
			ps.MarkSKSFailed("FailedCreate", "full")
		},
		condition: PodAutoscalerConditionSKSReady,
		want:      cond{corev1.ConditionFalse, "FailedCreate", "full"},
		wantReady: cond{corev1.ConditionFalse, "FailedCreate", "full"},
	}, {
		name: "SKS not ready yet",
		mark: func(ps *PodAutoscalerStatus) {
			ps.MarkActive()
			ps.MarkScaleTargetInitialized()
			ps.MarkSKSNotReady(ReasonPending, "")
		},
		condition: PodAutoscalerConditionSKSReady,
		want:      cond{corev1.ConditionUnknown, ReasonPending, ""},
		wantReady: cond{corev1.ConditionUnknown, ReasonPending, ""},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := &PodAutoscalerStatus{}
			ps.InitializeConditions()
			tc.mark(ps)
			for _, c := range []struct {
				t    duckv1.ConditionType
				want cond
			}{{tc.condition, tc.want}, {duckv1.ConditionReady, tc.wantReady}} {
				got := ps.GetCondition(c.t)
				if diff := cmp.Diff(c.want, cond{got.Status, got.Reason, got.Message}); diff != "" {
					t.Errorf("%s (-want +got):\n%s", c.t, diff)
				}
			}
		})
	}
}
