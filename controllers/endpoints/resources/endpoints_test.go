package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func by(manager string) discoveryv1.EndpointSlice {
	return discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: manager, Labels: map[string]string{discoveryv1.LabelManagedBy: manager}}}
}

func TestDecide(t *testing.T) {
	selectorless := &corev1.Service{}
	selected := &corev1.Service{Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	external := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}}
	for _, tc := range []struct {
		name   string
		svc    *corev1.Service
		slices []discoveryv1.EndpointSlice
		want   Decision
	}{
		{"a public Service: the ServerlessService's slices", selectorless, []discoveryv1.EndpointSlice{by("knit-serverlessservice"), by("knit-serverlessservice")}, Mirror},
		{"knit dev: the local runtime's slices of a Service with a selector", selected, []discoveryv1.EndpointSlice{by("knit-local-runtime")}, Mirror},
		{"knit dev's activator", selectorless, []discoveryv1.EndpointSlice{by("knit-dev")}, Mirror},
		{"an alias", selectorless, []discoveryv1.EndpointSlice{by(ManagedBy)}, Mirror},
		{"a cluster: Kubernetes' slices of a Service with a selector", selected, []discoveryv1.EndpointSlice{by("endpointslice-controller.k8s.io")}, Leave},
		{"knit dev against a cluster's API: Kubernetes' slice beside the runtime's", selected,
			[]discoveryv1.EndpointSlice{by("knit-local-runtime"), by("endpointslice-controller.k8s.io")}, Leave},
		{"hand-written Endpoints, mirrored to slices by Kubernetes", selectorless, []discoveryv1.EndpointSlice{by("endpointslicemirroring-controller.k8s.io")}, Leave},
		{"a slice without a manager", selectorless, []discoveryv1.EndpointSlice{{}}, Leave},
		{"no slices: empty knit's, make none", selectorless, nil, Refresh},
		{"ExternalName", external, []discoveryv1.EndpointSlice{by("knit-serverlessservice")}, Leave},
	} {
		if got := Decide(tc.svc, tc.slices); got != tc.want {
			t.Errorf("%s: Decide = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMakeEndpoints(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001", UID: "svc-uid",
		Labels: map[string]string{"serving.knative.dev/revision": "hello-00001"}}}
	subsets := []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1"), Ports: httpWant}}
	got := MakeEndpoints(svc, Mirrored{Subsets: subsets})
	want := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001",
			Labels: map[string]string{"serving.knative.dev/revision": "hello-00001",
				"endpointslice.kubernetes.io/skip-mirror": "true", "endpoints.kubernetes.io/managed-by": "knit-endpoints"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "hello-00001", UID: "svc-uid", Controller: ptr.To(true)}},
		},
		Subsets: subsets,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MakeEndpoints (-want +got):\n%s", diff)
	}
	if svc.Labels[LabelManagedBy] != "" {
		t.Error("MakeEndpoints wrote into the Service's labels")
	}

	headless := svc.DeepCopy()
	headless.Spec.ClusterIP = corev1.ClusterIPNone
	noted := MakeEndpoints(headless, Mirrored{Omitted: 2, Truncated: true})
	if _, ok := noted.Labels["service.kubernetes.io/headless"]; !ok {
		t.Errorf("headless Service's Endpoints labels %v: want service.kubernetes.io/headless", noted.Labels)
	}
	wantAnnotations := map[string]string{"endpoints.kubernetes.io/over-capacity": "truncated", "knit.dev/omitted-endpoints": "2"}
	if diff := cmp.Diff(wantAnnotations, noted.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

// An Endpoints as the API stores it equals what MakeEndpoints made, so
// nothing is written; any change the slices or the Service make is
// written, and annotations someone else set stay.
func TestDiffersAndUpdate(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello", UID: "u1"}}
	want := MakeEndpoints(svc, Mirrored{Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1"), Ports: httpWant}}})
	stored := want.DeepCopy()
	stored.ResourceVersion, stored.UID = "7", "ep-uid"
	stored.Annotations = map[string]string{"someone/else": "x"}
	if Differs(stored, want) {
		t.Fatal("an unchanged Endpoints differs: every reconcile would write it")
	}
	for name, change := range map[string]func(*corev1.Endpoints){
		"an address": func(e *corev1.Endpoints) { e.Subsets[0].Addresses = addrs("10.0.0.2") },
		"not ready": func(e *corev1.Endpoints) {
			e.Subsets[0].NotReadyAddresses, e.Subsets[0].Addresses = e.Subsets[0].Addresses, nil
		},
		"none":             func(e *corev1.Endpoints) { e.Subsets = nil },
		"a label":          func(e *corev1.Endpoints) { e.Labels["app"] = "web" },
		"the owner":        func(e *corev1.Endpoints) { e.OwnerReferences[0].UID = "u2" },
		"omitted endpoint": func(e *corev1.Endpoints) { e.Annotations = map[string]string{AnnotationOmitted: "1"} },
	} {
		w := want.DeepCopy()
		change(w)
		if !Differs(stored, w) {
			t.Errorf("%s changed: no difference seen", name)
			continue
		}
		have := stored.DeepCopy()
		Update(have, w)
		if Differs(have, w) || have.Annotations["someone/else"] != "x" || have.ResourceVersion != "7" {
			t.Errorf("%s changed: after Update %+v", name, have)
		}
	}
}

func TestOurs(t *testing.T) {
	kube := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelManagedBy: "endpoint-controller"}}}
	if Ours(kube) || Ours(&corev1.Endpoints{}) {
		t.Error("Kubernetes' or a hand-written Endpoints taken for knit's")
	}
	if !Ours(MakeEndpoints(&corev1.Service{}, Mirrored{})) {
		t.Error("knit's Endpoints not recognised")
	}
}
