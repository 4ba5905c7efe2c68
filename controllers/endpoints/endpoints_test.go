//go:build !unit

package endpoints

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var httpPort = []corev1.EndpointPort{{Name: "http", Port: 8012, Protocol: corev1.ProtocolTCP}}

func ips(ips ...string) []corev1.EndpointAddress {
	var out []corev1.EndpointAddress
	for _, ip := range ips {
		out = append(out, corev1.EndpointAddress{IP: ip})
	}
	return out
}

// waitSubsets waits for the Endpoints of ns/name to hold want.
func waitSubsets(t *testing.T, ns, name string, want []corev1.EndpointSubset) *corev1.Endpoints {
	t.Helper()
	var got *corev1.Endpoints
	eventually(t, fmt.Sprintf("Endpoints %s/%s", ns, name), func(ctx context.Context) (bool, string) {
		got = getEndpoints(ctx, t, ns, name)
		if got == nil {
			return false, "no Endpoints"
		}
		if !equality.Semantic.DeepEqual(got.Subsets, want) {
			return false, cmp.Diff(want, got.Subsets)
		}
		return true, ""
	})
	return got
}

// A Revision's public Service on a cluster: selectorless, its slices
// written by the ServerlessService. Its Endpoints follow the slices and
// belong to the Service.
func TestPublicServiceEndpoints(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "public")
	svc := service(ns, "hello-00001", false)
	create(t, svc)
	a := slice(svc, "hello-00001-a", "knit-serverlessservice", discoveryv1.AddressTypeIPv4,
		endpoint("10.0.0.1", true), endpoint("10.0.0.2", true), endpoint("10.0.0.3", false))
	b := slice(svc, "hello-00001-b", "knit-serverlessservice", discoveryv1.AddressTypeIPv4, endpoint("10.0.1.1", true))
	create(t, a)
	create(t, b)

	ep := waitSubsets(t, ns, svc.Name, []corev1.EndpointSubset{{Addresses: ips("10.0.0.1", "10.0.0.2", "10.0.1.1"), NotReadyAddresses: ips("10.0.0.3"), Ports: httpPort}})
	wantOwner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID, Controller: ptr.To(true)}}
	if diff := cmp.Diff(wantOwner, ep.OwnerReferences); diff != "" {
		t.Errorf("owner references, what deletes the Endpoints with the Service (-want +got):\n%s", diff)
	}
	wantLabels := map[string]string{"app": svc.Name, "endpointslice.kubernetes.io/skip-mirror": "true", "endpoints.kubernetes.io/managed-by": "knit-endpoints"}
	if diff := cmp.Diff(wantLabels, ep.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}

	// A replica turns not ready, another comes, a terminating one goes.
	a.Endpoints = []discoveryv1.Endpoint{endpoint("10.0.0.1", true), endpoint("10.0.0.2", false), endpoint("10.0.0.4", true),
		{Addresses: []string{"10.0.0.3"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false), Terminating: ptr.To(true)}}}
	if err := k8s.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	waitSubsets(t, ns, svc.Name, []corev1.EndpointSubset{{Addresses: ips("10.0.0.1", "10.0.0.4", "10.0.1.1"), NotReadyAddresses: ips("10.0.0.2"), Ports: httpPort}})

	// Every slice gone: the Endpoints stay, empty.
	for _, s := range []client.Object{a, b} {
		if err := k8s.Delete(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	ep = waitSubsets(t, ns, svc.Name, nil)

	// A change of the Service that changes nothing in its Endpoints
	// writes nothing.
	svc.Annotations = map[string]string{"touched": "yes"}
	if err := k8s.Update(ctx, svc); err != nil {
		t.Fatal(err)
	}
	settled(t, ns)
	if again := getEndpoints(ctx, t, ns, svc.Name); again.ResourceVersion != ep.ResourceVersion {
		t.Errorf("Endpoints written again (resourceVersion %s, then %s) with nothing changed", ep.ResourceVersion, again.ResourceVersion)
	}
}

// knit dev: the local runtime writes the slices of a Service with a
// selector, and no Kubernetes controller writes its Endpoints, so knit
// does. Its replicas' loopback addresses cannot be held and are counted.
func TestLocalRuntimeServiceEndpoints(t *testing.T) {
	ns := namespace(t, "dev")
	svc := service(ns, "web", true)
	create(t, svc)
	create(t, slice(svc, "web-r1", "knit-local-runtime", discoveryv1.AddressTypeFQDN, endpoint("10.0.0.7", true)))
	create(t, slice(svc, "web-r2", "knit-local-runtime", discoveryv1.AddressTypeFQDN, endpoint("127.0.0.1", true)))
	want := []corev1.EndpointSubset{{Addresses: ips("10.0.0.7"), Ports: httpPort}}
	eventually(t, "Endpoints of both replicas", func(ctx context.Context) (bool, string) {
		ep := getEndpoints(ctx, t, ns, svc.Name)
		if ep == nil {
			return false, "no Endpoints"
		}
		if omitted := ep.Annotations["knit.dev/omitted-endpoints"]; omitted != "1" {
			return false, fmt.Sprintf("knit.dev/omitted-endpoints = %q, want 1 (127.0.0.1)", omitted)
		}
		return equality.Semantic.DeepEqual(ep.Subsets, want), cmp.Diff(want, ep.Subsets)
	})
}

// On a cluster Kubernetes' controllers serve a Service with a selector:
// its endpointslice controller writes the slices, its endpoints
// controller the Endpoints. knit leaves both alone, as it leaves an
// Endpoints written by hand.
func TestLeavesOthersEndpoints(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "cluster")

	// A Service with a selector, its slice by Kubernetes, no Endpoints
	// yet: knit makes none.
	fresh := service(ns, "fresh", true)
	create(t, fresh)
	create(t, slice(fresh, "fresh-abc", "endpointslice-controller.k8s.io", discoveryv1.AddressTypeIPv4, endpoint("10.1.0.1", true)))

	// knit dev against a cluster's API: the local runtime's slice beside
	// Kubernetes' own, and Kubernetes' Endpoints.
	kube := service(ns, "kube", true)
	create(t, kube)
	create(t, slice(kube, "kube-abc", "endpointslice-controller.k8s.io", discoveryv1.AddressTypeIPv4, endpoint("10.1.0.2", true)))
	create(t, slice(kube, "kube-r1", "knit-local-runtime", discoveryv1.AddressTypeFQDN, endpoint("10.1.0.3", true)))
	kubeEP := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kube", Labels: map[string]string{"endpoints.kubernetes.io/managed-by": "endpoint-controller"}},
		Subsets: []corev1.EndpointSubset{{Addresses: ips("10.1.0.2"), Ports: httpPort}}}
	create(t, kubeEP)

	// A selectorless Service whose Endpoints someone wrote, with a slice
	// labelled as knit's.
	hand := service(ns, "hand", false)
	create(t, hand)
	handEP := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hand"},
		Subsets: []corev1.EndpointSubset{{Addresses: ips("10.1.0.4"), Ports: httpPort}}}
	create(t, handEP)
	create(t, slice(hand, "hand-x", "knit-serverlessservice", discoveryv1.AddressTypeIPv4, endpoint("10.1.0.5", true)))

	settled(t, ns)
	if ep := getEndpoints(ctx, t, ns, "fresh"); ep != nil {
		t.Errorf("knit made Endpoints for a Service Kubernetes serves: %+v", ep)
	}
	for _, before := range []*corev1.Endpoints{kubeEP, handEP} {
		if after := getEndpoints(ctx, t, ns, before.Name); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("Endpoints %s written by knit: %+v", before.Name, after)
		}
	}
}
