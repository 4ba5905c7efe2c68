package serverlessservice

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/knitops/knit/api"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/controllers/serverlessservice/resources"
	"github.com/knitops/knit/internal/endpointslices/endpointslicestest"
	"github.com/knitops/knit/internal/reconciletest"
)

var (
	key       = client.ObjectKey{Namespace: "default", Name: "hello-00001"}
	activator = Activator{Namespace: "knit-system", Service: "knit-activator"}
)

func testSKS(mode networkingv1alpha1.ServerlessServiceOperationMode) *networkingv1alpha1.ServerlessService {
	return &networkingv1alpha1.ServerlessService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001", UID: "sks-uid", Generation: 1},
		Spec:       networkingv1alpha1.ServerlessServiceSpec{Mode: mode},
	}
}

// endpoints is a slice of service in ns with one endpoint at address.
func endpoints(ns, name, service, address string, labels ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{address}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8012)}},
	}
	for i := 0; i+1 < len(labels); i += 2 {
		s.Labels[labels[i]] = labels[i+1]
	}
	return s
}

func TestReconcile(t *testing.T) {
	type cond struct {
		Status corev1.ConditionStatus
		Reason string
	}
	replica := endpoints("default", "hello-00001-private-abc", "hello-00001-private", "10.0.0.1")
	activatorSlice := endpoints("knit-system", "knit-activator-xyz", "knit-activator", "10.1.0.1")
	private := resources.MakePrivateService(testSKS(""))
	tests := []struct {
		name      string
		objs      []client.Object
		funcs     interceptor.Funcs
		wantErr   string
		want      cond
		addresses []string // of the public slices the SKS manages
		check     func(*testing.T, client.Client)
	}{{
		name: "create: Serve mode publishes the ready replicas",
		objs: []client.Object{testSKS(networkingv1alpha1.SKSOperationModeServe), replica, activatorSlice},
		want: cond{Status: corev1.ConditionTrue}, addresses: []string{"10.0.0.1"},
		check: func(t *testing.T, c client.Client) {
			for _, name := range []string{"hello-00001", "hello-00001-private"} {
				if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, &corev1.Service{}); err != nil {
					t.Errorf("Service %s: %v", name, err)
				}
			}
		},
	}, {
		name: "Proxy mode publishes the activators",
		objs: []client.Object{testSKS(networkingv1alpha1.SKSOperationModeProxy), replica, activatorSlice},
		want: cond{corev1.ConditionTrue, networkingv1alpha1.ReasonActivatorEndpoints}, addresses: []string{"10.1.0.1"},
	}, {
		name: "a slice of a replica gone is deleted, another writer's slice kept",
		objs: []client.Object{testSKS(networkingv1alpha1.SKSOperationModeServe), replica,
			endpoints("default", "hello-00001-stale", "hello-00001", "10.0.0.9", discoveryv1.LabelManagedBy, resources.ManagedBy),
			endpoints("default", "hello-00001-theirs", "hello-00001", "10.0.0.8")},
		want: cond{Status: corev1.ConditionTrue}, addresses: []string{"10.0.0.1"},
		check: func(t *testing.T, c client.Client) {
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "hello-00001-theirs"}, &discoveryv1.EndpointSlice{}); err != nil {
				t.Errorf("the slice the SKS does not manage: %v", err)
			}
		},
	}, {
		name: "nothing ready anywhere",
		objs: []client.Object{testSKS(networkingv1alpha1.SKSOperationModeServe)},
		want: cond{corev1.ConditionUnknown, networkingv1alpha1.ReasonNoHealthyBackends},
	}, {
		name: "update: a private Service whose selector was edited is put back",
		objs: []client.Object{testSKS(networkingv1alpha1.SKSOperationModeServe), replica, func() client.Object {
			s := private.DeepCopy()
			s.Spec.Selector = map[string]string{"app": "other"}
			return s
		}()},
		want: cond{Status: corev1.ConditionTrue}, addresses: []string{"10.0.0.1"},
		check: func(t *testing.T, c client.Client) {
			s := &corev1.Service{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(private), s); err != nil || !cmp.Equal(s.Spec.Selector, private.Spec.Selector) {
				t.Errorf("private Service selector %v (%v), want %v", s.Spec.Selector, err, private.Spec.Selector)
			}
		},
	}, {
		name: "update: a private Service made before the SKS labelled its Services gets the labels, others' kept",
		objs: []client.Object{testSKS(networkingv1alpha1.SKSOperationModeServe), replica, func() client.Object {
			s := private.DeepCopy()
			s.Labels = map[string]string{"team": "a"}
			return s
		}()},
		want: cond{Status: corev1.ConditionTrue}, addresses: []string{"10.0.0.1"},
		check: func(t *testing.T, c client.Client) {
			s := &corev1.Service{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(private), s); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"team": "a", networkingv1alpha1.ServerlessServiceLabelKey: "hello-00001", networkingv1alpha1.ServiceTypeLabelKey: "Private"}
			if diff := cmp.Diff(want, s.Labels); diff != "" {
				t.Errorf("private Service labels (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "not owned: the private Service's name is taken; no retry",
		objs: []client.Object{testSKS(networkingv1alpha1.SKSOperationModeServe), replica, func() client.Object {
			s := private.DeepCopy()
			s.OwnerReferences = nil
			return s
		}()},
		want: cond{corev1.ConditionFalse, owned.ReasonNotOwned},
	}, {
		name: "failure: the service range is full",
		objs: []client.Object{testSKS(networkingv1alpha1.SKSOperationModeServe), replica},
		funcs: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Service); ok {
				return apierrors.NewInternalError(errors.New("range is full"))
			}
			return c.Create(ctx, obj, opts...)
		}},
		wantErr: `cannot create Service "hello-00001-private"`,
		want:    cond{corev1.ConditionFalse, owned.ReasonFailedCreate},
	}, {
		name: "listing the endpoints fails: retried",
		objs: []client.Object{testSKS(networkingv1alpha1.SKSOperationModeServe), replica},
		funcs: interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return apierrors.NewServiceUnavailable("etcd is down")
		}},
		wantErr: "list EndpointSlices of default/hello-00001-private: etcd is down",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme, err := api.NewScheme()
			if err != nil {
				t.Fatal(err)
			}
			c := endpointslicestest.WithIndex(fake.NewClientBuilder().WithScheme(scheme)).WithObjects(tc.objs...).
				WithStatusSubresource(&networkingv1alpha1.ServerlessService{}).WithInterceptorFuncs(tc.funcs).Build()
			r := &Reconciler{client: c, activator: activator}
			_, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
			if !reconciletest.ErrMatches(err, tc.wantErr) {
				t.Fatalf("Reconcile error = %v, want %q", err, tc.wantErr)
			}
			if tc.funcs.List != nil {
				return // nothing more to read
			}
			sks := &networkingv1alpha1.ServerlessService{}
			if err := c.Get(context.Background(), key, sks); err != nil {
				t.Fatal(err)
			}
			var got cond
			if ready := sks.Status.GetCondition(networkingv1alpha1.SKSConditionEndpointsPopulated); ready != nil {
				got = cond{ready.Status, ready.Reason}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("EndpointsPopulated (-want +got):\n%s", diff)
			}
			if r := sks.Status.GetCondition(duckv1.ConditionReady); tc.want.Status != "" && r.Status != tc.want.Status {
				t.Errorf("Ready = %s, want %s", r.Status, tc.want.Status)
			}
			slices := &discoveryv1.EndpointSliceList{}
			if err := c.List(context.Background(), slices, client.InNamespace("default"), client.MatchingLabels{discoveryv1.LabelManagedBy: resources.ManagedBy}); err != nil {
				t.Fatal(err)
			}
			var addresses []string
			for _, s := range slices.Items {
				for _, ep := range s.Endpoints {
					addresses = append(addresses, ep.Addresses...)
				}
			}
			if diff := cmp.Diff(tc.addresses, addresses); diff != "" {
				t.Errorf("public endpoints (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

// A private slice finds its SKS by the labels it inherits from the
// Service, whatever the Service is called: a shortened name
// (names.PrivateService) cannot be parsed back, and a public slice or a
// stranger's slice wakes nothing.
func TestPrivateSliceOwner(t *testing.T) {
	long := "revision-timeout-does-not-exceed-timeout--egnetwcn-00001"
	labelled := func(service string, labels ...string) client.Object {
		return endpoints("default", service+"-abc", service, "10.0.0.1", labels...)
	}
	for _, tc := range []struct {
		name  string
		slice client.Object
		want  []reconcile.Request
	}{
		{name: "private", slice: labelled("hello-00001-private", networkingv1alpha1.ServerlessServiceLabelKey, "hello-00001", networkingv1alpha1.ServiceTypeLabelKey, "Private"),
			want: []reconcile.Request{{NamespacedName: key}}},
		{name: "private, shortened name", slice: labelled("revision-timeout-does-n9494d713f937bc1d4735f41081d6d844-private",
			networkingv1alpha1.ServerlessServiceLabelKey, long, networkingv1alpha1.ServiceTypeLabelKey, "Private"),
			want: []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "default", Name: long}}}},
		{name: "public", slice: labelled("hello-00001", networkingv1alpha1.ServerlessServiceLabelKey, "hello-00001", networkingv1alpha1.ServiceTypeLabelKey, "Public")},
		{name: "no labels, named like one", slice: labelled("hello-00001-private")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, privateSliceOwner(tc.slice)); diff != "" {
				t.Errorf("privateSliceOwner (-want +got):\n%s", diff)
			}
		})
	}
}

// The Services as the API server returns them, with its defaults, need
// no write: a reconcile of a settled SKS (every cold start has a few)
// costs the API server nothing.
func TestServiceAsDefaultedNeedsNoWrite(t *testing.T) {
	defaulted := func(svc *corev1.Service) *corev1.Service {
		have := svc.DeepCopy()
		have.Spec.ClusterIP, have.Spec.Type, have.Spec.SessionAffinity = "10.0.0.7", corev1.ServiceTypeClusterIP, corev1.ServiceAffinityNone
		for i := range have.Spec.Ports {
			have.Spec.Ports[i].Protocol = corev1.ProtocolTCP
		}
		have.Labels["added-by-someone"] = "else"
		return have
	}
	sks := testSKS(networkingv1alpha1.SKSOperationModeServe)
	for _, want := range []*corev1.Service{resources.MakePrivateService(sks), resources.MakePublicService(sks)} {
		if serviceDiffers(defaulted(want), want) {
			t.Errorf("Service %s as the API server returns it differs from what the SKS wants", want.Name)
		}
		noProtocol := want.DeepCopy()
		for i := range noProtocol.Spec.Ports {
			noProtocol.Spec.Ports[i].Protocol = ""
		}
		if serviceDiffers(defaulted(want), noProtocol) {
			t.Errorf("Service %s: a port without a protocol is TCP", want.Name)
		}
	}
	want := resources.MakePrivateService(sks)
	moved := defaulted(want)
	moved.Spec.Ports[0].TargetPort = intstr.FromInt32(9999)
	if !serviceDiffers(moved, want) {
		t.Error("a changed target port is not seen")
	}
	relabelled := defaulted(want)
	delete(relabelled.Labels, networkingv1alpha1.ServerlessServiceLabelKey)
	if !serviceDiffers(relabelled, want) {
		t.Error("a missing label is not seen")
	}
}
