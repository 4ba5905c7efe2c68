package resources

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ep is an endpoint at addr; state is "ready", "notready", "terminating"
// (not ready), "terminating-ready" (publishNotReadyAddresses) or "unknown"
// (no ready condition).
func ep(addr, state string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{addr}}
	switch state {
	case "ready":
		e.Conditions.Ready = ptr.To(true)
	case "notready":
		e.Conditions.Ready = ptr.To(false)
	case "terminating":
		e.Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(true), Terminating: ptr.To(true)}
	case "terminating-ready":
		e.Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(true)}
	}
	return e
}

func port(name string, n int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: ptr.To(name), Port: ptr.To(n), Protocol: ptr.To(corev1.ProtocolTCP)}
}

func sl(name string, t discoveryv1.AddressType, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
	return discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, AddressType: t, Ports: ports, Endpoints: eps}
}

func addrs(ips ...string) []corev1.EndpointAddress {
	var out []corev1.EndpointAddress
	for _, ip := range ips {
		out = append(out, corev1.EndpointAddress{IP: ip})
	}
	return out
}

var (
	http     = []discoveryv1.EndpointPort{port("http", 8012)}
	httpWant = []corev1.EndpointPort{{Name: "http", Port: 8012, Protocol: corev1.ProtocolTCP}}
	v4       = discoveryv1.AddressTypeIPv4
)

func TestSubsets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		slices []discoveryv1.EndpointSlice
		want   Mirrored
	}{
		{"no slices", nil, Mirrored{}},
		{"a slice without endpoints", []discoveryv1.EndpointSlice{sl("a", v4, http)}, Mirrored{}},
		{"ready and not ready", []discoveryv1.EndpointSlice{sl("a", v4, http, ep("10.0.0.2", "ready"), ep("10.0.0.3", "notready"), ep("10.0.0.1", "unknown"))},
			Mirrored{Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2"), NotReadyAddresses: addrs("10.0.0.3"), Ports: httpWant}}}},
		{"terminating left out, unless still ready (publishNotReadyAddresses)",
			[]discoveryv1.EndpointSlice{sl("a", v4, http, ep("10.0.0.1", "terminating"), ep("10.0.0.2", "terminating-ready"), ep("10.0.0.3", "ready"))},
			Mirrored{Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.2", "10.0.0.3"), Ports: httpWant}}}},
		{"slices with the same ports share a subset, sorted by address",
			[]discoveryv1.EndpointSlice{sl("b", v4, http, ep("10.0.0.10", "ready")), sl("a", v4, http, ep("10.0.0.9", "ready"), ep("10.0.0.11", "notready"))},
			Mirrored{Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.9", "10.0.0.10"), NotReadyAddresses: addrs("10.0.0.11"), Ports: httpWant}}}},
		{"an address ready in one slice and not in another is ready, once",
			[]discoveryv1.EndpointSlice{sl("a", v4, http, ep("10.0.0.1", "notready")), sl("b", v4, http, ep("10.0.0.1", "ready"))},
			Mirrored{Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1"), Ports: httpWant}}}},
		{"slices with other ports make other subsets, ports sorted by name",
			[]discoveryv1.EndpointSlice{
				sl("a", v4, []discoveryv1.EndpointPort{port("metrics", 9090), port("http", 8012)}, ep("10.0.0.1", "ready")),
				sl("b", v4, http, ep("10.0.0.2", "ready")),
			},
			Mirrored{Subsets: []corev1.EndpointSubset{
				{Addresses: addrs("10.0.0.2"), Ports: httpWant},
				{Addresses: addrs("10.0.0.1"), Ports: []corev1.EndpointPort{{Name: "http", Port: 8012, Protocol: corev1.ProtocolTCP}, {Name: "metrics", Port: 9090, Protocol: corev1.ProtocolTCP}}},
			}}},
		{"a port without a number or protocol",
			[]discoveryv1.EndpointSlice{sl("a", v4, []discoveryv1.EndpointPort{{Name: ptr.To("all")}, {Name: ptr.To("h2c"), Port: ptr.To[int32](81), AppProtocol: ptr.To("kubernetes.io/h2c")}}, ep("10.0.0.1", "ready"))},
			Mirrored{Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1"),
				Ports: []corev1.EndpointPort{{Name: "h2c", Port: 81, Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("kubernetes.io/h2c")}}}}}},
		{"no ports", []discoveryv1.EndpointSlice{sl("a", v4, nil, ep("10.0.0.1", "ready"))},
			Mirrored{Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1")}}}},
		{"IPv6, in canonical form", []discoveryv1.EndpointSlice{sl("a", discoveryv1.AddressTypeIPv6, http, ep("fd00:0::1", "ready"))},
			Mirrored{Subsets: []corev1.EndpointSubset{{Addresses: addrs("fd00::1"), Ports: httpWant}}}},
		{"knit dev's addresses: loopback and link-local in FQDN slices, which Endpoints refuse",
			[]discoveryv1.EndpointSlice{
				sl("a", discoveryv1.AddressTypeFQDN, http, ep("127.0.0.1", "ready"), ep("169.254.64.2", "notready")),
				sl("b", discoveryv1.AddressTypeFQDN, http, ep("10.0.0.1", "ready"), ep("replica.example", "ready")),
			},
			Mirrored{Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1"), Ports: httpWant}}, Omitted: 3}},
		{"other addresses the API refuses in Endpoints", []discoveryv1.EndpointSlice{sl("a", discoveryv1.AddressTypeIPv6, http,
			ep("::", "ready"), ep("::1", "ready"), ep("fe80::1", "ready"), ep("ff02::1", "ready"), ep("fe80::1%eth0", "ready"), ep("::ffff:127.0.0.1", "ready"))},
			Mirrored{Omitted: 6}},
		{"an IPv4-mapped address is stored as IPv4", []discoveryv1.EndpointSlice{sl("a", discoveryv1.AddressTypeIPv6, http, ep("::ffff:10.0.0.1", "ready"))},
			Mirrored{Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1"), Ports: httpWant}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Subsets(tc.slices)); diff != "" {
				t.Errorf("Subsets (-want +got):\n%s", diff)
			}
		})
	}
}

// The first of an endpoint's addresses is its address; hostname, node
// and target go with it.
func TestSubsetsAddressDetails(t *testing.T) {
	e := discoveryv1.Endpoint{Addresses: []string{"10.0.0.1", "10.0.0.9"}, Hostname: ptr.To("web-0"), NodeName: ptr.To("node-a"),
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-0", UID: "pod-uid"}}
	got := Subsets([]discoveryv1.EndpointSlice{sl("a", v4, http, e)})
	want := []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1", Hostname: "web-0", NodeName: ptr.To("node-a"),
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-0", UID: "pod-uid"}}}, Ports: httpWant}}
	if diff := cmp.Diff(want, got.Subsets); diff != "" {
		t.Errorf("Subsets (-want +got):\n%s", diff)
	}
}

// Past MaxAddresses, ready addresses are kept first and the rest dropped.
func TestSubsetsTruncated(t *testing.T) {
	var ready, notReady []discoveryv1.Endpoint
	for i := range 600 {
		ready = append(ready, ep(fmt.Sprintf("10.1.%d.%d", i/250, i%250+1), "ready"))
		notReady = append(notReady, ep(fmt.Sprintf("10.2.%d.%d", i/250, i%250+1), "notready"))
	}
	got := Subsets([]discoveryv1.EndpointSlice{sl("a", v4, http, ready...), sl("b", v4, http, notReady...)})
	if !got.Truncated || len(got.Subsets) != 1 || len(got.Subsets[0].Addresses) != 600 || len(got.Subsets[0].NotReadyAddresses) != 400 {
		t.Fatalf("1200 addresses: truncated %v, %d subsets; want 600 ready and 400 not ready kept", got.Truncated, len(got.Subsets))
	}
	exactly := Subsets([]discoveryv1.EndpointSlice{sl("a", v4, http, ready...), sl("b", v4, http, notReady[:400]...)})
	if exactly.Truncated {
		t.Errorf("exactly %d addresses: truncated", MaxAddresses)
	}
}
