package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

func TestServerlessServiceLifecycle(t *testing.T) {
	type cond struct {
		Status          corev1.ConditionStatus
		Reason, Message string
	}
	tests := []struct {
		name                         string
		mark                         func(*ServerlessServiceStatus)
		endpoints, activators, ready cond
	}{{
		name:       "replicas",
		mark:       func(ss *ServerlessServiceStatus) { ss.MarkActivatorEndpointsPopulated(); ss.MarkEndpointsReady() },
		endpoints:  cond{Status: corev1.ConditionTrue},
		activators: cond{Status: corev1.ConditionTrue},
		ready:      cond{Status: corev1.ConditionTrue},
	}, {
		name: "activators",
		mark: func(ss *ServerlessServiceStatus) {
			ss.MarkActivatorEndpointsPopulated()
			ss.MarkEndpointsFromActivators("Proxy mode")
		},
		endpoints:  cond{corev1.ConditionTrue, ReasonActivatorEndpoints, "Proxy mode"},
		activators: cond{Status: corev1.ConditionTrue},
		ready:      cond{Status: corev1.ConditionTrue},
	}, {
		name:       "nothing ready; no activator is informational",
		mark:       func(ss *ServerlessServiceStatus) { ss.MarkActivatorEndpointsRemoved(); ss.MarkNoHealthyBackends() },
		endpoints:  cond{corev1.ConditionUnknown, ReasonNoHealthyBackends, "neither replicas nor activators have ready endpoints"},
		activators: cond{corev1.ConditionFalse, ReasonNoActivatorEndpoints, "no activator endpoints are published"},
		ready:      cond{corev1.ConditionUnknown, ReasonNoHealthyBackends, "neither replicas nor activators have ready endpoints"},
	}, {
		name:       "a Service that cannot be created",
		mark:       func(ss *ServerlessServiceStatus) { ss.MarkEndpointsFailed("FailedCreate", "range is full") },
		endpoints:  cond{corev1.ConditionFalse, "FailedCreate", "range is full"},
		activators: cond{Status: corev1.ConditionUnknown},
		ready:      cond{corev1.ConditionFalse, "FailedCreate", "range is full"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ss := &ServerlessServiceStatus{}
			ss.InitializeConditions()
			tc.mark(ss)
			for _, c := range []struct {
				t    duckv1.ConditionType
				want cond
			}{{SKSConditionEndpointsPopulated, tc.endpoints}, {SKSConditionActivatorEndpointsPopulated, tc.activators}, {duckv1.ConditionReady, tc.ready}} {
				got := ss.GetCondition(c.t)
				if got == nil {
					got = &duckv1.Condition{Status: corev1.ConditionUnknown}
				}
				if diff := cmp.Diff(c.want, cond{got.Status, got.Reason, got.Message}); diff != "" {
					t.Errorf("%s (-want +got):\n%s", c.t, diff)
				}
			}
		})
	}
}
