package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestMakeEndpointSlices(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hello-00001-private", UID: "svc-uid",
			Labels: map[string]string{"serving.knative.dev/revision": "hello-00001"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"serving.knative.dev/revision": "hello-00001"},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), AppProtocol: ptr.To("kubernetes.io/h2c")},
				{Name: "http-autometric", Port: 9090, TargetPort: intstr.FromInt32(9091)},
				{Name: "undeclared-name", Port: 8022, TargetPort: intstr.FromString("nope")},
				{Name: "same-as-port", Port: 8012},
			},
		},
	}
	ports := func(base int32) portMap {
		m, _ := allocatePorts(revisionPod(), func() (int32, error) { base++; return base - 1, nil })
		return m
	}
	labels := map[string]string{"serving.knative.dev/revision": "hello-00001", "app": "x"}
	replicas := []replicaView{
		{ID: "bbbbb", Labels: labels, Ports: ports(41000), IP: "127.0.0.1", Ready: false},
		{ID: "aaaaa", Labels: labels, Ports: ports(40000), IP: "127.0.0.1", Ready: true},
		{ID: "ccccc", Labels: labels, Ports: ports(42000), IP: "169.254.64.6", Ready: true, Terminating: true}, // isolated
		{ID: "ddddd", Labels: labels, Ports: ports(44000), Ready: false},                                       // no network yet
		{ID: "other", Labels: map[string]string{"serving.knative.dev/revision": "hello-00002"}, Ports: ports(43000), IP: "127.0.0.1", Ready: true},
	}
	slice := func(id, ip string, port0 int32, ready, serving, terminating bool) discoveryv1.EndpointSlice {
		return discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: "ns", Name: "hello-00001-private-" + id,
				Labels: map[string]string{
					"serving.knative.dev/revision":           "hello-00001",
					"kubernetes.io/service-name":             "hello-00001-private",
					"endpointslice.kubernetes.io/managed-by": "knit-local-runtime",
				},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "hello-00001-private", UID: "svc-uid",
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			},
			AddressType: discoveryv1.AddressTypeFQDN, // the API server refuses loopback and link-local IPv4
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{
				Ready: ptr.To(ready), Serving: ptr.To(serving), Terminating: ptr.To(terminating)}}},
			Ports: []discoveryv1.EndpointPort{
				{Name: ptr.To("http"), Port: ptr.To(port0 + 1), Protocol: ptr.To(corev1.ProtocolTCP), AppProtocol: ptr.To("kubernetes.io/h2c")},
				{Name: ptr.To("http-autometric"), Port: ptr.To(port0 + 2), Protocol: ptr.To(corev1.ProtocolTCP)},
				{Name: ptr.To("same-as-port"), Port: ptr.To(port0 + 1), Protocol: ptr.To(corev1.ProtocolTCP)},
			},
		}
	}
	want := []discoveryv1.EndpointSlice{
		slice("aaaaa", "127.0.0.1", 40000, true, true, false),
		slice("bbbbb", "127.0.0.1", 41000, false, false, false),
		slice("ccccc", "169.254.64.6", 42000, false, true, true),
	}
	if diff := cmp.Diff(want, makeEndpointSlices(svc, replicas)); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}

	svc.Spec.Selector = nil
	if got := makeEndpointSlices(svc, replicas); len(got) != 0 {
		t.Errorf("a Service without a selector got %d slices; its endpoints are not ours", len(got))
	}
}
