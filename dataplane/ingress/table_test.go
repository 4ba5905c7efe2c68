package ingress

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func route(name string, labels map[string]string, url string, targets ...servingv1.TrafficTarget) servingv1.Route {
	rt := servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels}}
	rt.Status.URL = url
	rt.Status.Traffic = targets
	return rt
}

func slice(svc string, port int32, ready bool, addrs ...string) discoveryv1.EndpointSlice {
	return discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: svc + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		Endpoints:  []discoveryv1.Endpoint{{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}},
		Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port)}},
	}
}

func TestBuildRoutesHostsToEndpoints(t *testing.T) {
	routes := []servingv1.Route{
		route("hello", nil, "http://hello.default.localhost:8080",
			servingv1.TrafficTarget{RevisionName: "hello-00001", Percent: ptr.To[int64](50), Tag: "old", URL: "http://old-hello.default.localhost:8080"},
			servingv1.TrafficTarget{RevisionName: "hello-00002", Percent: ptr.To[int64](50)}),
		route("private", map[string]string{servingv1.VisibilityLabelKey: "cluster-local"}, "http://private.default.svc.cluster.local",
			servingv1.TrafficTarget{RevisionName: "private-00001", Percent: ptr.To[int64](100)}),
	}
	slices := []discoveryv1.EndpointSlice{
		slice("hello-00001", 4001, true, "127.0.0.1"),
		slice("hello-00002", 4002, true, "127.0.0.1"),
		slice("hello-00002", 4003, false, "127.0.0.1"),
		slice("private-00001", 4004, true, "127.0.0.1"),
	}
	tbl := Build(routes, slices)

	counts := map[string]int{}
	e := tbl.lookup("HELLO.default.localhost:8080")
	if e == nil {
		t.Fatal("route host not found (host match must ignore case and port)")
	}
	for i := 0; i < 200; i++ {
		counts[e.pick().addr()]++
	}
	if diff := cmp.Diff(map[string]int{"127.0.0.1:4001": 100, "127.0.0.1:4002": 100}, counts); diff != "" {
		t.Errorf("50/50 split over 200 requests (-want +got):\n%s", diff)
	}
	if got := tbl.lookup("old-hello.default.localhost").pick().addr(); got != "127.0.0.1:4001" {
		t.Errorf("tag host reaches %q, want the tagged revision's 127.0.0.1:4001", got)
	}
	if tbl.lookup("private.default.svc.cluster.local") != nil {
		t.Error("a cluster-local route is on the external ingress")
	}
	if tbl.lookup("nope.default.localhost") != nil {
		t.Error("unknown host found")
	}
}
