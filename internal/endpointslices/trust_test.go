package endpointslices

import (
	"context"
	"net/netip"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func managed(by string, typ discoveryv1.AddressType, addrs ...string) discoveryv1.EndpointSlice {
	return discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: by, Labels: map[string]string{discoveryv1.LabelServiceName: "hello-00001-private", discoveryv1.LabelManagedBy: by}},
		AddressType: typ,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: addrs}},
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		slice discoveryv1.EndpointSlice
		ok    bool
	}{
		{"Kubernetes' controller, IPv4", managed("endpointslice-controller.k8s.io", discoveryv1.AddressTypeIPv4, "10.0.0.1"), true},
		{"the SKS, IPv6", managed("knit-serverlessservice", discoveryv1.AddressTypeIPv6, "fd00::1"), true},
		{"knit dev's loopback as FQDN", managed("knit-local-runtime", discoveryv1.AddressTypeFQDN, "127.0.0.1"), true},
		{"knit dev's activator", managed("knit-dev", discoveryv1.AddressTypeFQDN, "127.0.0.1"), true},
		{"knit dev's isolated replica", managed("knit-local-runtime", discoveryv1.AddressTypeIPv4, "169.254.118.174"), true},
		{"link-local outside knit dev's replica networks", managed("knit-local-runtime", discoveryv1.AddressTypeIPv4, "169.254.1.2"), false},
		{"no manager", managed("", discoveryv1.AddressTypeIPv4, "10.0.0.1"), false},
		{"the mirroring controller (anyone who writes Endpoints)", managed("endpointslicemirroring-controller.k8s.io", discoveryv1.AddressTypeIPv4, "10.0.0.1"), false},
		{"a host name", managed("endpointslice-controller.k8s.io", discoveryv1.AddressTypeFQDN, "example.com"), false},
		{"cloud metadata", managed("endpointslice-controller.k8s.io", discoveryv1.AddressTypeIPv4, "10.0.0.1", "169.254.169.254"), false},
		{"IPv6 link-local with a zone", managed("endpointslice-controller.k8s.io", discoveryv1.AddressTypeIPv6, "fe80::1%eth0"), false},
		{"unspecified", managed("endpointslice-controller.k8s.io", discoveryv1.AddressTypeIPv4, "0.0.0.0"), false},
		{"unknown address type", managed("endpointslice-controller.k8s.io", "Unix", "10.0.0.1"), false},
	} {
		if err := Check(&tc.slice); (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok %t", tc.name, err, tc.ok)
		}
	}
}

func TestTrustedKeepsOrderAndDropsTheRest(t *testing.T) {
	in := []discoveryv1.EndpointSlice{
		managed("endpointslice-controller.k8s.io", discoveryv1.AddressTypeIPv4, "10.0.0.1"),
		managed("someone", discoveryv1.AddressTypeIPv4, "10.0.0.2"),
		managed("knit-serverlessservice", discoveryv1.AddressTypeIPv4, "10.0.0.3"),
	}
	out := Trusted(context.Background(), in)
	if len(out) != 2 || out[0].Name != in[0].Name || out[1].Name != in[2].Name {
		t.Errorf("Trusted kept %d slices, want the first and the third", len(out))
	}
	if all := in[:1]; &Trusted(context.Background(), all)[0] != &all[0] {
		t.Error("Trusted copied a list it keeps whole")
	}
}

func FuzzCheckAddress(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "::1", "fe80::1%eth0", "example.com", "169.254.169.254", "::ffff:169.254.169.254", "169.254.100.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, a string) {
		if checkAddress(a) != nil {
			return
		}
		// The one link-local range accepted is knit dev's isolated
		// replicas' (ReplicaNetworks).
		ip, err := netip.ParseAddr(a)
		if err != nil || (ip.Unmap().IsLinkLocalUnicast() && !ReplicaNetworks.Contains(ip.Unmap())) {
			t.Errorf("checkAddress accepted %q", a)
		}
	})
}
