package podautoscaler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
)

// SKSReady follows the SKS's Ready: True once it is ready at its
// generation, False (with its reason and message) when it failed, Unknown
// while it waits.
func TestMarkStatusSKSReady(t *testing.T) {
	sks := func(status corev1.ConditionStatus, reason, message string, observed int64) *networkingv1alpha1.ServerlessService {
		s := &networkingv1alpha1.ServerlessService{}
		s.Generation, s.Status.ObservedGeneration = 2, observed
		if status != "" {
			s.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: status, Reason: reason, Message: message}}
		}
		return s
	}
	type cond struct {
		Status          corev1.ConditionStatus
		Reason, Message string
	}
	full := `cannot create Service "hello-00001-private": range is full`
	tests := []struct {
		name      string
		sks       *networkingv1alpha1.ServerlessService
		want      cond
		wantReady corev1.ConditionStatus
	}{
		{"ready", sks(corev1.ConditionTrue, "", "", 2), cond{Status: corev1.ConditionTrue}, corev1.ConditionTrue},
		{"ready at an older generation", sks(corev1.ConditionTrue, "", "", 1), cond{Status: corev1.ConditionUnknown}, corev1.ConditionUnknown},
		{"failed", sks(corev1.ConditionFalse, "FailedCreate", full, 2), cond{corev1.ConditionFalse, "FailedCreate", full}, corev1.ConditionFalse},
		{"waiting for endpoints", sks(corev1.ConditionUnknown, "NoHealthyBackends", "none", 2), cond{corev1.ConditionUnknown, "NoHealthyBackends", "none"}, corev1.ConditionUnknown},
		{"no status yet", sks("", "", "", 0), cond{corev1.ConditionUnknown, "Pending", ""}, corev1.ConditionUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s autoscalingv1alpha1.PodAutoscalerStatus
			autoscalingv1alpha1.PodAutoscalerConditions.Manage(&s.Status).InitializeConditions()
			MarkStatus(&s, Recommendation{DesiredScale: 1, InitialReady: 1}, 1, tc.sks)
			c := s.GetCondition(autoscalingv1alpha1.PodAutoscalerConditionSKSReady)
			if diff := cmp.Diff(tc.want, cond{c.Status, c.Reason, c.Message}); diff != "" {
				t.Errorf("SKSReady (-want +got):\n%s", diff)
			}
			if got := s.GetCondition(duckv1.ConditionReady).Status; got != tc.wantReady {
				t.Errorf("Ready = %s, want %s", got, tc.wantReady)
			}
		})
	}
}

// Active and ScaleTargetInitialized follow the replicas: Queued until the
// initial scale is ready (at once for initial-scale 0, as Knative's
// activeThreshold), Activating when scaled up again, NoTraffic at zero.
func TestMarkStatusActive(t *testing.T) {
	type cond struct {
		Status          corev1.ConditionStatus
		Reason, Message string
	}
	queued := cond{corev1.ConditionUnknown, autoscalingv1alpha1.ReasonQueued, "waiting for the first replica"}
	noTraffic := cond{corev1.ConditionFalse, autoscalingv1alpha1.ReasonNoTraffic, "the revision is scaled to zero; the activator will wake it"}
	readySKS := &networkingv1alpha1.ServerlessService{}
	readySKS.Status.ServiceName, readySKS.Status.PrivateServiceName = "hello-00001", "hello-00001-private"
	readySKS.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue}}
	tests := []struct {
		name                string
		initialized         bool
		desired, ready      int32
		initialReady        int32
		noService           bool
		active, initialised cond
	}{
		{"waiting for the first replica", false, 1, 0, 1, false, queued, queued},
		{"the first replica ready", false, 1, 1, 1, false, cond{Status: corev1.ConditionTrue}, cond{Status: corev1.ConditionTrue}},
		{"one of an initial scale of three ready", false, 3, 1, 3, false, cond{Status: corev1.ConditionTrue},
			cond{corev1.ConditionUnknown, autoscalingv1alpha1.ReasonQueued, "waiting for 3 ready replicas, the initial scale (1 so far)"}},
		{"initial scale three reached", false, 3, 3, 3, false, cond{Status: corev1.ConditionTrue}, cond{Status: corev1.ConditionTrue}},
		{"initial scale 0: initialized at zero", false, 0, 0, 0, false, noTraffic, cond{Status: corev1.ConditionTrue}},
		{"initial scale 0, the SKS without its Service yet", false, 0, 0, 0, true, queued, queued},
		{"scaled to zero", true, 0, 0, 1, false, noTraffic, cond{Status: corev1.ConditionTrue}},
		{"woken from zero", true, 2, 0, 1, false,
			cond{corev1.ConditionUnknown, autoscalingv1alpha1.ReasonActivating, "waiting for 2 replica(s) to become ready"}, cond{Status: corev1.ConditionTrue}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s autoscalingv1alpha1.PodAutoscalerStatus
			s.InitializeConditions()
			if tc.initialized {
				s.MarkScaleTargetInitialized()
			}
			sks := readySKS.DeepCopy()
			if tc.noService {
				sks.Status.ServiceName, sks.Status.PrivateServiceName = "", ""
			}
			MarkStatus(&s, Recommendation{DesiredScale: tc.desired, InitialReady: tc.initialReady}, tc.ready, sks)
			get := func(ct duckv1.ConditionType) cond {
				c := s.GetCondition(ct)
				return cond{c.Status, c.Reason, c.Message}
			}
			got := []cond{get(autoscalingv1alpha1.PodAutoscalerConditionActive), get(autoscalingv1alpha1.PodAutoscalerConditionScaleTargetInitialized)}
			if diff := cmp.Diff([]cond{tc.active, tc.initialised}, got); diff != "" {
				t.Errorf("Active, ScaleTargetInitialized (-want +got):\n%s", diff)
			}
			if *s.DesiredScale != tc.desired || *s.ActualScale != tc.ready || s.ServiceName != sks.Status.ServiceName || s.MetricsServiceName != sks.Status.PrivateServiceName {
				t.Errorf("status %+v, want the scales and the SKS's Services", s)
			}
		})
	}
}
