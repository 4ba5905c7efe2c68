package serverlessservice

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
)

func TestMarkEndpoints(t *testing.T) {
	type cond struct {
		Status          corev1.ConditionStatus
		Reason, Message string
	}
	endpoints := func(n int) []discoveryv1.EndpointSlice {
		s := discoveryv1.EndpointSlice{}
		for range n {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
		return []discoveryv1.EndpointSlice{s}
	}
	tests := []struct {
		name                 string
		mode                 networkingv1alpha1.ServerlessServiceOperationMode
		public               []discoveryv1.EndpointSlice
		fromReplicas         bool
		activators           int
		endpoints, activator cond
	}{
		{"replicas", networkingv1alpha1.SKSOperationModeServe, endpoints(2), true, 1, cond{Status: corev1.ConditionTrue}, cond{Status: corev1.ConditionTrue}},
		{"activators in Proxy mode", networkingv1alpha1.SKSOperationModeProxy, endpoints(2), false, 2,
			cond{corev1.ConditionTrue, networkingv1alpha1.ReasonActivatorEndpoints, "Proxy mode: requests go through 2 activator endpoint(s)"}, cond{Status: corev1.ConditionTrue}},
		{"nothing ready, no activator", networkingv1alpha1.SKSOperationModeServe, nil, false, 0,
			cond{corev1.ConditionUnknown, networkingv1alpha1.ReasonNoHealthyBackends, "neither replicas nor activators have ready endpoints"},
			cond{corev1.ConditionFalse, networkingv1alpha1.ReasonNoActivatorEndpoints, "no activator endpoints are published"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sks := &networkingv1alpha1.ServerlessService{}
			sks.Spec.Mode = tc.mode
			sks.Status.InitializeConditions()
			markEndpoints(sks, tc.public, tc.fromReplicas, tc.activators)
			get := func(ct duckv1.ConditionType) cond {
				c := sks.Status.GetCondition(ct)
				return cond{c.Status, c.Reason, c.Message}
			}
			got := []cond{get(networkingv1alpha1.SKSConditionEndpointsPopulated), get(networkingv1alpha1.SKSConditionActivatorEndpointsPopulated)}
			if diff := cmp.Diff([]cond{tc.endpoints, tc.activator}, got); diff != "" {
				t.Errorf("EndpointsPopulated, ActivatorEndpointsPopulated (-want +got):\n%s", diff)
			}
		})
	}
}
