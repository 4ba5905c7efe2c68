package ingress

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
)

// servedMapping is a DomainMapping its controller has claimed and
// resolved, in namespace default unless ns says otherwise.
func servedMapping(domain, ref string, age time.Duration, mut ...func(*servingv1beta1.DomainMapping)) servingv1beta1.DomainMapping {
	dm := servingv1beta1.DomainMapping{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: domain, Generation: 1,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-age))},
		Spec: servingv1beta1.DomainMappingSpec{Ref: servingv1beta1.KReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: ref}},
	}
	dm.Status.ObservedGeneration = 1
	dm.Status.Conditions = duckv1.Conditions{
		{Type: servingv1beta1.DomainMappingConditionDomainClaimed, Status: corev1.ConditionTrue},
		{Type: servingv1beta1.DomainMappingConditionReferenceResolved, Status: corev1.ConditionTrue},
	}
	for _, m := range mut {
		m(&dm)
	}
	return dm
}

// A served mapping answers on the public listener as its Route, a
// cluster-local one included (mapping a domain is how a private Service
// gets a public name); an unclaimed, unresolved or not-yet-observed one
// does not answer; a Route's own host is not taken over; of two mappings
// of one domain the older serves; http-protocol is the mapping's own.
func TestMapDomains(t *testing.T) {
	routes := []servingv1.Route{
		route("hello", nil, "http://hello.default.example.com",
			servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](0), Tag: "old", URL: "http://old-hello.default.example.com"},
			servingv1.TrafficTarget{RevisionName: "hello-2", Percent: ptr.To[int64](100)}),
		route("private", map[string]string{servingv1.VisibilityLabelKey: "cluster-local"}, "http://private.default.svc.cluster.local",
			servingv1.TrafficTarget{RevisionName: "private-1", Percent: ptr.To[int64](100)}),
	}
	unclaimed := func(dm *servingv1beta1.DomainMapping) {
		dm.Status.Conditions[0].Status = corev1.ConditionFalse
	}
	stale := func(dm *servingv1beta1.DomainMapping) { dm.Generation = 2 }
	redirected := func(dm *servingv1beta1.DomainMapping) {
		dm.Annotations = map[string]string{"networking.knative.dev/http-protocol": "Redirected"}
	}
	dms := []servingv1beta1.DomainMapping{
		servedMapping("shop.example.org", "hello", time.Hour),
		servedMapping("old.example.org", "old-hello", time.Hour),
		servedMapping("api.example.org", "private", time.Hour, redirected),
		servedMapping("unclaimed.example.org", "hello", time.Hour, unclaimed),
		servedMapping("stale.example.org", "hello", time.Hour, stale),
		servedMapping("hello.default.example.com", "private", time.Hour),
		servedMapping("nothing.example.org", "missing", time.Hour),
		servedMapping("twice.example.org", "private", time.Minute),
		servedMapping("twice.example.org", "hello", time.Hour),
	}
	tbl := Options{}.Build(routes, nil)
	tbl.mapDomains(Options{}, dms)
	for host, want := range map[string]string{
		"shop.example.org":          "default/hello-2",
		"SHOP.example.org:8080":     "default/hello-2",
		"old.example.org":           "default/hello-1",
		"api.example.org":           "default/private-1",
		"unclaimed.example.org":     "",
		"stale.example.org":         "",
		"hello.default.example.com": "default/hello-2",
		"nothing.example.org":       "",
		"twice.example.org":         "default/hello-2",
	} {
		req := httptest.NewRequest(http.MethodGet, "http://"+host+"/", nil)
		got := ""
		if e := tbl.route(req); e != nil {
			got = e.pick().revision
		}
		if got != want {
			t.Errorf("%s: routed to %q, want %q", host, got, want)
		}
	}
	if e := tbl.lookup("api.example.org"); e == nil || !e.redirect {
		t.Error("api.example.org: the mapping's http-protocol Redirected is not followed")
	}
	if e := tbl.lookup("shop.example.org"); e == nil || e.redirect || e.namespace != "default" {
		t.Errorf("shop.example.org: %+v, want served over HTTP for namespace default's certificates", e)
	}
}

// Serves answers for every name the internal listener routes.
func TestServes(t *testing.T) {
	r := NewRouter()
	tbl := Options{}.Build([]servingv1.Route{route("hello", nil, "http://hello.default.example.com",
		servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](100)})}, nil)
	tbl.mapDomains(Options{}, []servingv1beta1.DomainMapping{servedMapping("shop.example.org", "hello", time.Hour)})
	r.Update(tbl)
	for host, want := range map[string]bool{
		"hello.default.example.com": true, "hello.default.svc.cluster.local": true, "hello.default.svc": true,
		"hello.default": true, "Shop.Example.org": true, "other.default.svc.cluster.local": false, "example.com": false,
	} {
		if got := r.Serves(host); got != want {
			t.Errorf("Serves(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestProgrammed(t *testing.T) {
	r := NewRouter()
	if r.Programmed("default", "hello", "7") {
		t.Fatal("a router with no table says it serves a Route")
	}
	served := route("hello", nil, "http://hello.default.localhost", servingv1.TrafficTarget{RevisionName: "hello-00001", Percent: ptr.To[int64](100)})
	served.ResourceVersion = "7"
	idle := route("idle", nil, "http://idle.default.localhost") // no traffic: nothing to serve, and loaded
	idle.ResourceVersion = "3"
	r.Update(Options{}.Build([]servingv1.Route{served, idle}, nil))
	for _, tc := range []struct {
		name, version string
		want          bool
	}{
		{"hello", "7", true},
		{"hello", "8", false}, // a later version: its status is not in the table yet
		{"hello", "6", false},
		{"idle", "3", true},
		{"gone", "1", false},
	} {
		if got := r.Programmed("default", tc.name, tc.version); got != tc.want {
			t.Errorf("Programmed(%s at %s) = %v, want %v", tc.name, tc.version, got, tc.want)
		}
	}
}
