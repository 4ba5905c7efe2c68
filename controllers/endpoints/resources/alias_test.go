package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestMakeAlias(t *testing.T) {
	source := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: "knit-activator", UID: "src-uid", Labels: map[string]string{"app": "activator"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.0.9",
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80), NodePort: 30080}}},
	}
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: "activator-service", Labels: map[string]string{"app": "activator"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "knit-activator", UID: "src-uid", Controller: ptr.To(true)}}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80)}}},
	}
	got := MakeAlias(source, "activator-service")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("MakeAlias (-want +got):\n%s", diff)
	}

	stored := got.DeepCopy()
	stored.Spec.ClusterIP, stored.Spec.Type = "10.96.0.10", corev1.ServiceTypeClusterIP
	if AliasDiffers(stored, want) {
		t.Error("a stored alias with the API's defaults differs")
	}
	stored.Spec.Selector = map[string]string{"app": "x"}
	stored.Spec.Ports[0].Port = 81
	if !AliasDiffers(stored, want) {
		t.Fatal("a selector and another port: no difference seen")
	}
	UpdateAlias(stored, want)
	if AliasDiffers(stored, want) {
		t.Errorf("after UpdateAlias: %+v", stored.Spec)
	}
}

func TestAliasSlices(t *testing.T) {
	alias := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: "activator-service", UID: "alias-uid"}}
	src := discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "knit-system", Name: "knit-activator-local", Labels: map[string]string{discoveryv1.LabelServiceName: "knit-activator", discoveryv1.LabelManagedBy: "knit-dev"}},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, Hostname: ptr.To("activator-8012")}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8012), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	got := AliasSlices(alias, []discoveryv1.EndpointSlice{src})
	if len(got) != 1 {
		t.Fatalf("%d slices, want 1", len(got))
	}
	want := discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: got[0].Name,
			Labels:          map[string]string{discoveryv1.LabelServiceName: "activator-service", discoveryv1.LabelManagedBy: "knit-endpoints"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "activator-service", UID: "alias-uid", Controller: ptr.To(true)}}},
		AddressType: src.AddressType, Endpoints: src.Endpoints, Ports: src.Ports,
	}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("AliasSlices (-want +got):\n%s", diff)
	}
	if again := AliasSlices(alias, []discoveryv1.EndpointSlice{src}); again[0].Name != got[0].Name {
		t.Errorf("a source slice's copy renamed from %s to %s", got[0].Name, again[0].Name)
	}
	got[0].Endpoints[0].Addresses[0] = "changed"
	if src.Endpoints[0].Addresses[0] != "127.0.0.1" {
		t.Error("the copy shares the source slice's endpoints")
	}
	if SliceDiffers(&got[0], &got[0]) {
		t.Error("a slice differs from itself")
	}
}
