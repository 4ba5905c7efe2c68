package activator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/endpointslices/endpointslicestest"
	"github.com/knitops/knit/internal/names"
)

func slice(ports map[string]int32, eps ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
	s := discoveryv1.EndpointSlice{Endpoints: eps}
	for name, port := range ports {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(name), Port: ptr.To(port)})
	}
	return s
}

func ep(addr string, ready *bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
}

func TestEndpointAddresses(t *testing.T) {
	serving := map[string]int32{"http": 8012, "http-autometric": 9091}
	terminating := func(addr string, ready bool) discoveryv1.Endpoint {
		e := ep(addr, ptr.To(ready))
		e.Conditions.Terminating = ptr.To(true)
		return e
	}
	for _, tc := range []struct {
		name   string
		slices []discoveryv1.EndpointSlice
		want   endpointSet
	}{
		{name: "none"},
		{
			name:   "ready unset or true is ready, false is probed",
			slices: []discoveryv1.EndpointSlice{slice(serving, ep("10.0.0.2", nil), ep("10.0.0.1", ptr.To(true)), ep("10.0.0.3", ptr.To(false)))},
			want:   endpointSet{ready: []string{"10.0.0.1:8012", "10.0.0.2:8012"}, notReady: []string{"10.0.0.3:8012"}},
		},
		{
			name:   "terminating is neither, ready or not",
			slices: []discoveryv1.EndpointSlice{slice(serving, terminating("10.0.0.1", true), terminating("10.0.0.2", false), ep("10.0.0.3", nil))},
			want:   endpointSet{ready: []string{"10.0.0.3:8012"}},
		},
		{
			name: "knit dev: a slice per replica, all 127.0.0.1 on their own ports",
			slices: []discoveryv1.EndpointSlice{
				slice(map[string]int32{"http": 40001}, ep("127.0.0.1", ptr.To(true))),
				slice(map[string]int32{"http": 40002}, ep("127.0.0.1", ptr.To(false))),
			},
			want: endpointSet{ready: []string{"127.0.0.1:40001"}, notReady: []string{"127.0.0.1:40002"}},
		},
		{
			name:   "no http port: skipped",
			slices: []discoveryv1.EndpointSlice{slice(map[string]int32{"http-autometric": 9091}, ep("10.0.0.1", nil))},
		},
		{
			name:   "IPv6 is bracketed",
			slices: []discoveryv1.EndpointSlice{slice(serving, ep("fd00::1", nil))},
			want:   endpointSet{ready: []string{"[fd00::1]:8012"}},
		},
		{
			name:   "the same address in two slices once, ready where either says so",
			slices: []discoveryv1.EndpointSlice{slice(serving, ep("10.0.0.1", nil), ep("10.0.0.2", ptr.To(false))), slice(serving, ep("10.0.0.1", ptr.To(false)), ep("10.0.0.2", ptr.To(false)))},
			want:   endpointSet{ready: []string{"10.0.0.1:8012"}, notReady: []string{"10.0.0.2:8012"}},
		},
		{
			name:   "an endpoint without addresses is skipped",
			slices: []discoveryv1.EndpointSlice{slice(serving, discoveryv1.Endpoint{})},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, endpointAddresses(tc.slices), cmp.AllowUnexported(endpointSet{}), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("endpointAddresses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigFor(t *testing.T) {
	const maxWait = time.Minute
	for _, tc := range []struct {
		name string
		spec servingv1.RevisionSpec
		cc   int
		wait time.Duration
	}{
		{name: "defaults: unlimited, maxWait", wait: maxWait},
		{name: "containerConcurrency", spec: servingv1.RevisionSpec{ContainerConcurrency: ptr.To[int64](10)}, cc: 10, wait: maxWait},
		{name: "a shorter timeout wins", spec: servingv1.RevisionSpec{TimeoutSeconds: ptr.To[int64](30)}, wait: 30 * time.Second},
		{name: "a longer timeout is capped", spec: servingv1.RevisionSpec{TimeoutSeconds: ptr.To[int64](300)}, wait: maxWait},
		{name: "zero timeout is unset", spec: servingv1.RevisionSpec{TimeoutSeconds: ptr.To[int64](0)}, wait: maxWait},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := configFor(&servingv1.Revision{Spec: tc.spec}, maxWait)
			if got.containerConcurrency != tc.cc || got.wait != tc.wait {
				t.Fatalf("configFor = %+v, want cc %d, wait %v", got, tc.cc, tc.wait)
			}
		})
	}
}

// A private slice names its Revision by the labels it inherits from the
// SKS's private Service, not by its Service's name, which is shortened
// for a long Revision (names.PrivateService) and cannot be parsed back.
func TestRevisionOfSlice(t *testing.T) {
	long := "revision-timeout-does-not-exceed-timeout--egnetwcn-00001"
	for _, tc := range []struct {
		name              string
		service, sks, typ string
		want              []reconcile.Request
	}{
		{name: "private", service: "hello-00001-private", sks: "hello-00001", typ: "Private",
			want: []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "hello-00001"}}}},
		{name: "private, shortened name", service: names.PrivateService(long), sks: long, typ: "Private",
			want: []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: long}}}},
		{name: "public", service: "hello-00001", sks: "hello-00001", typ: "Public"},
		{name: "named like a private one, unlabelled", service: "hello-00001-private"},
		{name: "nothing", service: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			labels := map[string]string{discoveryv1.LabelServiceName: tc.service}
			if tc.sks != "" {
				labels[networkingv1alpha1.ServerlessServiceLabelKey] = tc.sks
				labels[networkingv1alpha1.ServiceTypeLabelKey] = tc.typ
			}
			s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Labels: labels}}
			if diff := cmp.Diff(tc.want, revisionOfSlice(context.Background(), s)); diff != "" {
				t.Errorf("revisionOfSlice (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActivatorAddresses(t *testing.T) {
	typed := func(family discoveryv1.AddressType, eps ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
		s := slice(map[string]int32{"http": 8012}, eps...)
		s.AddressType = family
		return s
	}
	dualStack := []discoveryv1.EndpointSlice{
		typed(discoveryv1.AddressTypeIPv4, ep("10.0.0.1", nil), ep("10.0.0.2", nil)),
		typed(discoveryv1.AddressTypeIPv6, ep("fd00::1", nil), ep("fd00::2", nil)),
	}
	for _, tc := range []struct {
		name   string
		slices []discoveryv1.EndpointSlice
		self   string
		want   []string
	}{
		{name: "none"},
		{
			name:   "ready unset or true counts, false does not; sorted",
			slices: []discoveryv1.EndpointSlice{slice(map[string]int32{"http": 8012}, ep("10.0.0.2", nil), ep("10.0.0.1", ptr.To(true)), ep("10.0.0.3", ptr.To(false)))},
			want:   []string{"10.0.0.1", "10.0.0.2"},
		},
		{
			name: "any port, or none; two slices; repeats once",
			slices: []discoveryv1.EndpointSlice{
				slice(nil, ep("10.0.0.9", nil), ep("10.0.0.1", nil)),
				slice(map[string]int32{"http2": 8013}, ep("10.0.0.1", nil)),
			},
			want: []string{"10.0.0.1", "10.0.0.9"},
		},
		{
			name:   "an endpoint without addresses is skipped",
			slices: []discoveryv1.EndpointSlice{slice(nil, discoveryv1.Endpoint{})},
		},
		{name: "dual stack, self IPv4: the IPv4 slice", slices: dualStack, self: "10.0.0.2", want: []string{"10.0.0.1", "10.0.0.2"}},
		{name: "dual stack, self IPv6: the IPv6 slice", slices: dualStack, self: "fd00::1", want: []string{"fd00::1", "fd00::2"}},
		{name: "dual stack, self in neither: all", slices: dualStack, self: "10.0.0.9", want: []string{"10.0.0.1", "10.0.0.2", "fd00::1", "fd00::2"}},
		{
			name:   "self unready is in no slice: all",
			slices: []discoveryv1.EndpointSlice{typed(discoveryv1.AddressTypeIPv4, ep("10.0.0.1", nil), ep("10.0.0.2", ptr.To(false)))},
			self:   "10.0.0.2",
			want:   []string{"10.0.0.1"},
		},
		{
			name:   "knit dev: FQDN 127.0.0.1",
			slices: []discoveryv1.EndpointSlice{typed(discoveryv1.AddressTypeFQDN, ep("127.0.0.1", ptr.To(true)))},
			self:   "127.0.0.1",
			want:   []string{"127.0.0.1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, activatorAddresses(tc.slices, tc.self)); diff != "" {
				t.Fatalf("activatorAddresses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActivatorServiceOfSlice(t *testing.T) {
	want := []reconcile.Request{{NamespacedName: activatorService}}
	for _, tc := range []struct {
		namespace, service string
		want               []reconcile.Request
	}{
		{"knit-system", "knit-activator", want},
		{"default", "knit-activator", nil},
		{"knit-system", "knit-autoscaler", nil},
		{"knit-system", "", nil},
	} {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Labels: map[string]string{discoveryv1.LabelServiceName: tc.service}}}
		if diff := cmp.Diff(tc.want, activatorServiceOfSlice(context.Background(), s)); diff != "" {
			t.Errorf("activatorServiceOfSlice(%s/%s) (-want +got):\n%s", tc.namespace, tc.service, diff)
		}
	}
}

// sliceReader is a cache holding the slices, indexed by Service as the
// manager's is.
func sliceReader(t *testing.T, slices []discoveryv1.EndpointSlice) client.Reader {
	t.Helper()
	b := endpointslicestest.WithIndex(fake.NewClientBuilder())
	for i := range slices {
		s := slices[i].DeepCopy()
		s.Name = fmt.Sprintf("slice-%d", i)
		b = b.WithObjects(s)
	}
	return b.Build()
}

// The peers reconciler places the activator among the ready endpoints of
// knit-system/knit-activator only, and every Revision follows.
func TestPeersReconciler(t *testing.T) {
	a, _ := startActivator(t, Options{Self: "10.0.0.2"})
	a.SetEndpoints(rev, 1, nil)
	activatorSlice := func(namespace, service string, eps ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
		s := slice(map[string]int32{"http": 8012}, eps...)
		s.Namespace, s.Labels = namespace, map[string]string{discoveryv1.LabelServiceName: service}
		return s
	}
	r := &peersReconciler{a: a}
	for _, tc := range []struct {
		name   string
		slices []discoveryv1.EndpointSlice
		want   peers
	}{
		{
			name: "second of two ready",
			slices: []discoveryv1.EndpointSlice{
				activatorSlice("knit-system", "knit-activator", ep("10.0.0.3", ptr.To(false)), ep("10.0.0.2", nil)),
				activatorSlice("knit-system", "knit-activator", ep("10.0.0.1", ptr.To(true))),
				activatorSlice("knit-system", "knit-autoscaler", ep("10.0.0.0", nil)),
				activatorSlice("default", "knit-activator", ep("10.0.0.0", nil)),
			},
			want: peers{index: 1, count: 2},
		},
		{
			name:   "no longer ready itself",
			slices: []discoveryv1.EndpointSlice{activatorSlice("knit-system", "knit-activator", ep("10.0.0.1", nil), ep("10.0.0.2", ptr.To(false)))},
			want:   peers{index: -1, count: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.client = sliceReader(t, tc.slices)
			if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: activatorService}); err != nil {
				t.Fatal(err)
			}
			a.mu.RLock()
			got := a.peers
			a.mu.RUnlock()
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(peers{})); diff != "" {
				t.Fatalf("activator's peers (-want +got):\n%s", diff)
			}
			thr := a.get(rev).thr
			thr.mu.Lock()
			got = thr.peers
			thr.mu.Unlock()
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(peers{})); diff != "" {
				t.Fatalf("revision's peers (-want +got):\n%s", diff)
			}
		})
	}
}
