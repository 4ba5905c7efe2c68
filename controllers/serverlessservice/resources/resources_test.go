package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func sks(mode networkingv1alpha1.ServerlessServiceOperationMode) *networkingv1alpha1.ServerlessService {
	return &networkingv1alpha1.ServerlessService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001", UID: "sks-uid", Labels: map[string]string{servingv1.RevisionLabelKey: "hello-00001"}},
		Spec:       networkingv1alpha1.ServerlessServiceSpec{Mode: mode},
	}
}

var owner = []metav1.OwnerReference{{APIVersion: "networking.internal.knative.dev/v1alpha1", Kind: "ServerlessService", Name: "hello-00001", UID: "sks-uid",
	Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}

func TestMakeServices(t *testing.T) {
	s := sks(networkingv1alpha1.SKSOperationModeServe)
	labels := func(serviceType string) map[string]string {
		return map[string]string{servingv1.RevisionLabelKey: "hello-00001",
			"networking.internal.knative.dev/serverlessservice": "hello-00001", "networking.internal.knative.dev/serviceType": serviceType}
	}
	wantPrivate := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001-private", Labels: labels("Private"), OwnerReferences: owner},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{servingv1.RevisionLabelKey: "hello-00001"},
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromString("http")},
				{Name: "http-autometric", Protocol: corev1.ProtocolTCP, Port: 9090, TargetPort: intstr.FromString("http-autometric")},
			},
		},
	}
	if diff := cmp.Diff(wantPrivate, MakePrivateService(s)); diff != "" {
		t.Errorf("MakePrivateService (-want +got):\n%s", diff)
	}
	wantPublic := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001", Labels: labels("Public"), OwnerReferences: owner},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80)}}},
	}
	if diff := cmp.Diff(wantPublic, MakePublicService(s)); diff != "" {
		t.Errorf("MakePublicService (-want +got):\n%s", diff)
	}
}

// slice is an EndpointSlice with addresses, ready unless listed in unready.
func slice(ns, name string, ready []string, unready ...string) discoveryv1.EndpointSlice {
	s := discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr.To("http"), Port: ptr.To[int32](8012), Protocol: ptr.To(corev1.ProtocolTCP)},
			{Name: ptr.To("http-autometric"), Port: ptr.To[int32](9091)},
		},
	}
	for _, a := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
	}
	for _, a := range unready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}})
	}
	return s
}

// public is the slice the SKS writes for a source slice: its ready
// endpoints, the http port alone.
func public(name string, addresses ...string) discoveryv1.EndpointSlice {
	s := discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, OwnerReferences: owner, Labels: map[string]string{
			servingv1.RevisionLabelKey: "hello-00001", discoveryv1.LabelServiceName: "hello-00001", discoveryv1.LabelManagedBy: ManagedBy,
			"networking.internal.knative.dev/serverlessservice": "hello-00001", "networking.internal.knative.dev/serviceType": "Public",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8012), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, a := range addresses {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	return s
}

func TestPublicEndpoints(t *testing.T) {
	replicas := []discoveryv1.EndpointSlice{slice("default", "hello-00001-private-b", []string{"10.0.0.2"}, "10.0.0.3"), slice("default", "hello-00001-private-a", []string{"10.0.0.1"})}
	notReady := []discoveryv1.EndpointSlice{slice("default", "hello-00001-private-a", nil, "10.0.0.1")}
	activators := []discoveryv1.EndpointSlice{slice("knit-system", "knit-activator-x", []string{"10.1.0.1", "10.1.0.2"}), slice("knit-system", "knit-activator-empty", nil)}
	// The public slices' names hash their source's namespace and name;
	// they are compared apart.
	fromA, fromB := public("", "10.0.0.1"), public("", "10.0.0.2")
	fromActivator := public("", "10.1.0.1", "10.1.0.2")
	tests := []struct {
		name                string
		mode                networkingv1alpha1.ServerlessServiceOperationMode
		private, activators []discoveryv1.EndpointSlice
		want                []discoveryv1.EndpointSlice
		fromReplicas        bool
	}{
		{"serve: the ready replicas, sorted, unready ones left out", networkingv1alpha1.SKSOperationModeServe, replicas, activators,
			[]discoveryv1.EndpointSlice{fromA, fromB}, true},
		{"serve with no replica ready falls back on the activators", networkingv1alpha1.SKSOperationModeServe, notReady, activators,
			[]discoveryv1.EndpointSlice{fromActivator}, false},
		{"proxy: the activators, replicas ready or not", networkingv1alpha1.SKSOperationModeProxy, replicas, activators,
			[]discoveryv1.EndpointSlice{fromActivator}, false},
		{"nothing anywhere", networkingv1alpha1.SKSOperationModeServe, nil, nil, []discoveryv1.EndpointSlice{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, fromReplicas := PublicEndpoints(sks(tc.mode), tc.private, tc.activators)
			for i := range got {
				if i < len(tc.want) {
					tc.want[i].Name = got[i].Name
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PublicEndpoints (-want +got):\n%s", diff)
			}
			if fromReplicas != tc.fromReplicas {
				t.Errorf("fromReplicas = %v, want %v", fromReplicas, tc.fromReplicas)
			}
		})
	}
	// A slice's public name is stable and tells sources apart.
	a1, _ := PublicEndpoints(sks(networkingv1alpha1.SKSOperationModeServe), replicas, nil)
	a2, _ := PublicEndpoints(sks(networkingv1alpha1.SKSOperationModeServe), replicas, nil)
	if a1[0].Name != a2[0].Name || a1[0].Name == a1[1].Name {
		t.Errorf("public slice names %q, %q then %q: want stable and distinct", a1[0].Name, a1[1].Name, a2[0].Name)
	}
}

// The names of an SKS's Services fit 63 characters whatever the SKS is
// called, as a Service's name must: Knative's conformance Service
// revision-timeout-does-not-exceed-timeout--egnetwcn has a 56-character
// Revision, whose <name>-private would be 64. Its public slices are
// named by the same rule (a slice's name may be longer, but one rule for
// every derived name leaves nothing to get wrong).
func TestLongNames(t *testing.T) {
	s := sks(networkingv1alpha1.SKSOperationModeServe)
	s.Name = "revision-timeout-does-not-exceed-timeout--egnetwcn-00001"
	slices, _ := PublicEndpoints(s, []discoveryv1.EndpointSlice{slice("default", "x", []string{"10.0.0.1"})}, nil)
	if len(slices) != 1 {
		t.Fatalf("PublicEndpoints = %d slices, want 1", len(slices))
	}
	got := map[string]string{
		"private": MakePrivateService(s).Name, "public": MakePublicService(s).Name, "public slice": slices[0].Name,
		"private label": MakePrivateService(s).Labels["networking.internal.knative.dev/serverlessservice"],
	}
	want := map[string]string{
		"private": "revision-timeout-does-n9494d713f937bc1d4735f41081d6d844-private", "public": s.Name,
		// Child(s.Name, "-<8 hex digits of the source>"): 22 characters
		// kept, the md5 of the Revision, the suffix.
		"public slice":  "revision-timeout-does-9494d713f937bc1d4735f41081d6d844" + slices[0].Name[len(slices[0].Name)-9:],
		"private label": s.Name,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if n := len(slices[0].Name); n > 63 {
		t.Errorf("public slice name %q is %d characters", slices[0].Name, n)
	}
}

func TestReadyCount(t *testing.T) {
	if got := ReadyCount([]discoveryv1.EndpointSlice{slice("d", "a", []string{"1", "2"}, "3"), slice("d", "b", nil, "4")}); got != 2 {
		t.Errorf("ReadyCount = %d, want 2", got)
	}
}
