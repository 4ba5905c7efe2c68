package dev

import (
	"context"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/api"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/local/runtime"
	"github.com/knitops/knit/platform"
)

// After a restart, a revision that was served by replicas of the previous
// knit dev is served by the activator before anything routes, and a
// revision at zero is left as it was.
func TestSettleEndpointsPointsRevisionsOfDeadReplicasAtTheActivator(t *testing.T) {
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	slice := func(ns, name, service, managedBy string, port int32) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
				discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: managedBy,
			}},
			AddressType: discoveryv1.AddressTypeFQDN,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port)}},
		}
	}
	sks := func(name string, mode networkingv1alpha1.ServerlessServiceOperationMode) *networkingv1alpha1.ServerlessService {
		return &networkingv1alpha1.ServerlessService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
			Spec: networkingv1alpha1.ServerlessServiceSpec{Mode: mode}}
	}
	const activatorPort, deadPort = 9999, 41000
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&networkingv1alpha1.ServerlessService{}).WithObjects(
		sks("served-00001", networkingv1alpha1.SKSOperationModeServe),
		sks("idle-00001", networkingv1alpha1.SKSOperationModeProxy),
		slice(platform.ActivatorService.Namespace, "knit-activator-local", platform.ActivatorService.Service, "knit-dev", activatorPort),
		slice("default", "served-00001-private-abcde", "served-00001-private", runtime.ManagedBy, deadPort),
		slice("default", "served-00001-dead", "served-00001", "knit-serverlessservice", deadPort),
		slice("default", "idle-00001-keep", "idle-00001", "knit-serverlessservice", activatorPort),
	).Build()

	if err := settleEndpoints(context.Background(), c, false); err != nil {
		t.Fatal(err)
	}
	ports := func(service string) (ports []int32) {
		var list discoveryv1.EndpointSliceList
		if err := c.List(context.Background(), &list, client.InNamespace("default"), client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Items {
			for _, p := range s.Ports {
				ports = append(ports, *p.Port)
			}
		}
		return ports
	}
	if got := ports("served-00001-private"); len(got) != 0 {
		t.Errorf("the dead replica's endpoints are still there: ports %v", got)
	}
	if got := ports("served-00001"); len(got) != 1 || got[0] != activatorPort {
		t.Errorf("public endpoints of the served revision: ports %v, want the activator's %d alone", got, activatorPort)
	}
	var idle discoveryv1.EndpointSlice
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "idle-00001-keep"}, &idle); err != nil {
		t.Errorf("the revision at zero was reconciled though nothing it mirrored changed: %v", err)
	}
}
