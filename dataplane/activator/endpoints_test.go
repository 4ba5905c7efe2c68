package activator

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	servingv1 "github.com/knitops/knit/api/serving/v1"
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

func TestReadyAddresses(t *testing.T) {
	serving := map[string]int32{"http": 8012, "http-autometric": 9091}
	for _, tc := range []struct {
		name   string
		slices []discoveryv1.EndpointSlice
		want   []string
	}{
		{name: "none"},
		{
			name:   "ready unset or true counts, false does not",
			slices: []discoveryv1.EndpointSlice{slice(serving, ep("10.0.0.2", nil), ep("10.0.0.1", ptr.To(true)), ep("10.0.0.3", ptr.To(false)))},
			want:   []string{"10.0.0.1:8012", "10.0.0.2:8012"},
		},
		{
			name: "knit dev: a slice per replica, all 127.0.0.1 on their own ports",
			slices: []discoveryv1.EndpointSlice{
				slice(map[string]int32{"http": 40001}, ep("127.0.0.1", ptr.To(true))),
				slice(map[string]int32{"http": 40002}, ep("127.0.0.1", ptr.To(true))),
			},
			want: []string{"127.0.0.1:40001", "127.0.0.1:40002"},
		},
		{
			name:   "no http port: skipped",
			slices: []discoveryv1.EndpointSlice{slice(map[string]int32{"http-autometric": 9091}, ep("10.0.0.1", nil))},
		},
		{
			name:   "IPv6 is bracketed",
			slices: []discoveryv1.EndpointSlice{slice(serving, ep("fd00::1", nil))},
			want:   []string{"[fd00::1]:8012"},
		},
		{
			name:   "the same address in two slices once",
			slices: []discoveryv1.EndpointSlice{slice(serving, ep("10.0.0.1", nil)), slice(serving, ep("10.0.0.1", nil))},
			want:   []string{"10.0.0.1:8012"},
		},
		{
			name:   "an endpoint without addresses is skipped",
			slices: []discoveryv1.EndpointSlice{slice(serving, discoveryv1.Endpoint{})},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, readyAddresses(tc.slices)); diff != "" {
				t.Fatalf("readyAddresses (-want +got):\n%s", diff)
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

func TestRevisionOfSlice(t *testing.T) {
	for _, tc := range []struct {
		service string
		want    []reconcile.Request
	}{
		{"hello-00001-private", []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "hello-00001"}}}},
		{"hello-00001", nil},
		{"-private", nil},
		{"", nil},
	} {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Labels: map[string]string{discoveryv1.LabelServiceName: tc.service}}}
		if diff := cmp.Diff(tc.want, revisionOfSlice(context.Background(), s)); diff != "" {
			t.Errorf("revisionOfSlice(service %q) (-want +got):\n%s", tc.service, diff)
		}
	}
}
