package ingress

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/internal/hopauth"
)

func route(name string, labels map[string]string, url string, targets ...servingv1.TrafficTarget) servingv1.Route {
	rt := servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels}}
	rt.Status.URL = url
	rt.Status.Traffic = targets
	return rt
}

func slice(svc string, port int32, ready bool, addrs ...string) discoveryv1.EndpointSlice {
	return discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: svc + "-x", Labels: map[string]string{
			discoveryv1.LabelServiceName: svc, discoveryv1.LabelManagedBy: "knit-serverlessservice"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port)}},
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
	tbl := Options{}.Build(routes, slices)

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

// A slice that names a Revision's public Service but was not written by
// the SKS or Kubernetes, or that holds a host name, is not routed to:
// whoever may write EndpointSlices in a namespace must not turn the
// ingress into a proxy to an address of their choosing.
func TestBuildIgnoresUntrustedSlices(t *testing.T) {
	routes := []servingv1.Route{route("hello", nil, "http://hello.default.localhost",
		servingv1.TrafficTarget{RevisionName: "hello-00001", Percent: ptr.To[int64](100)})}
	unmanaged := slice("hello-00001", 4002, true, "127.0.0.2")
	unmanaged.Name = "planted"
	delete(unmanaged.Labels, discoveryv1.LabelManagedBy)
	forged := slice("hello-00001", 4003, true, "127.0.0.3")
	forged.Name, forged.Labels[discoveryv1.LabelManagedBy] = "forged", "someone-else"
	fqdn := slice("hello-00001", 80, true, "metadata.google.internal")
	fqdn.Name, fqdn.AddressType = "fqdn", discoveryv1.AddressTypeFQDN
	linkLocal := slice("hello-00001", 80, true, "169.254.169.254")
	linkLocal.Name = "metadata"
	for _, tc := range []struct {
		name  string
		extra discoveryv1.EndpointSlice
	}{{"no managed-by", unmanaged}, {"another manager", forged}, {"FQDN host name", fqdn}, {"link-local", linkLocal}} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := Options{}.Build(routes, []discoveryv1.EndpointSlice{slice("hello-00001", 4001, true, "127.0.0.1"), tc.extra})
			b := tbl.lookup("hello.default.localhost").pick()
			if diff := cmp.Diff([]string{"127.0.0.1:4001"}, b.addrs); diff != "" {
				t.Errorf("endpoints of hello-00001 (-want +got):\n%s", diff)
			}
		})
	}
}

// The ingress signs the Revision it routes each request to, and a
// client's own signature never passes: it is replaced, or removed when
// the router has no keys.
func TestRouterSignsTheRevision(t *testing.T) {
	keys := hopauth.Generate()
	got := make(chan http.Header, 2)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }))
	defer backend.Close()
	addr := backend.Listener.Addr().(*net.TCPAddr)
	for _, signed := range []bool{true, false} {
		r := NewRouter()
		if signed {
			r.SignRoutes(keys)
		}
		r.Update(Options{}.Build([]servingv1.Route{route("hello", nil, "http://hello.default.localhost",
			servingv1.TrafficTarget{RevisionName: "hello-00001", Percent: ptr.To[int64](100)})},
			[]discoveryv1.EndpointSlice{slice("hello-00001", int32(addr.Port), true, addr.IP.String())}))
		front := httptest.NewServer(r)
		req, _ := http.NewRequest(http.MethodGet, front.URL, nil)
		req.Host = "hello.default.localhost"
		req.Header.Set(hopauth.RouteHeader, keys.SignRoute("default", "other-00001", time.Now()))
		resp, err := http.DefaultClient.Do(req)
		front.Close()
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := <-got
		sig := h.Get(hopauth.RouteHeader)
		switch {
		case signed && keys.CheckRoute(sig, "default", "hello-00001", time.Now()) != nil:
			t.Errorf("signing router: %s = %q, want a signature of default/hello-00001", hopauth.RouteHeader, sig)
		case !signed && sig != "":
			t.Errorf("router without keys passed the client's %s on", hopauth.RouteHeader)
		}
	}
}

// hello is a Route with a tag at 0% (old, on hello-1) beside its 100%
// target (hello-2), as Knative's tag-header e2e test sets it up.
func hello() []servingv1.Route {
	return []servingv1.Route{route("hello", nil, "http://hello.default.localhost",
		servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](0), Tag: "old", URL: "http://old-hello.default.localhost"},
		servingv1.TrafficTarget{RevisionName: "hello-2", Percent: ptr.To[int64](100)})}
}

// routed is where a table sends a request, and the header it sets.
type routed struct {
	Revision string
	Header   string
	Value    []string
}

func routeOf(tbl *Table, host string, tags ...string) routed {
	req := httptest.NewRequest(http.MethodGet, "http://"+host+"/", nil)
	for _, tag := range tags {
		req.Header.Add(TagHeader, tag)
	}
	e := tbl.route(req)
	if e == nil {
		return routed{Revision: "no entry"}
	}
	tg := e.pick()
	return routed{Revision: tg.revision, Header: tg.header, Value: tg.value}
}

// With tag-header-based-routing on, a request to the main host naming a
// tag goes to the tag's Revision, though its percent is 0; a tag the
// Route does not have (or several tags) takes the split, which marks its
// requests Knative-Serving-Default-Route: true; a tag's own host marks
// its requests with the tag and pays the header no heed. Off, the header
// changes nothing and the table sets none.
func TestBuildTagHeaderRouting(t *testing.T) {
	split := routed{Revision: "default/hello-2"}
	tagged := routed{Revision: "default/hello-1"}
	splitOn := routed{Revision: "default/hello-2", Header: DefaultRouteHeader, Value: []string{"true"}}
	taggedOn := routed{Revision: "default/hello-1", Header: TagHeader, Value: []string{"old"}}
	for _, tc := range []struct {
		name    string
		host    string
		tags    []string
		off, on routed
	}{
		{name: "main host, no tag", host: "hello.default.localhost", off: split, on: splitOn},
		{name: "main host, a tag at 0%", host: "hello.default.localhost:8080", tags: []string{"old"}, off: split, on: taggedOn},
		{name: "main host, an unknown tag", host: "hello.default.localhost", tags: []string{"nope"}, off: split, on: splitOn},
		{name: "main host, a tag in another case", host: "hello.default.localhost", tags: []string{"OLD"}, off: split, on: splitOn},
		{name: "main host, two tags", host: "hello.default.localhost", tags: []string{"old", "old"}, off: split, on: splitOn},
		{name: "tag host", host: "old-hello.default.localhost", off: tagged, on: taggedOn},
		{name: "tag host, another tag", host: "old-hello.default.localhost", tags: []string{"nope"}, off: tagged, on: taggedOn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.off, routeOf(Options{}.Build(hello(), nil), tc.host, tc.tags...)); diff != "" {
				t.Errorf("tag-header routing off (-want +got):\n%s", diff)
			}
			on := Options{TagHeaderRouting: true}.Build(hello(), nil)
			if diff := cmp.Diff(tc.on, routeOf(on, tc.host, tc.tags...)); diff != "" {
				t.Errorf("tag-header routing on (-want +got):\n%s", diff)
			}
		})
	}
}

// Knative routes by the tag header only when its flag is Enabled.
func TestOptionsFrom(t *testing.T) {
	for value, want := range map[string]bool{"": false, "Disabled": false, "Allowed": false, "Enabled": true, "enabled": true} {
		f, err := config.ParseFeatures(map[string]string{"tag-header-based-routing": value})
		if err != nil {
			t.Fatal(err)
		}
		if got := OptionsFrom(f).TagHeaderRouting; got != want {
			t.Errorf("tag-header-based-routing: %q routes by the header: %v, want %v", value, got, want)
		}
	}
}

// A Host is matched without its port and case, IPv6 literals included.
func TestLookupHostForms(t *testing.T) {
	tbl := &Table{hosts: map[string]*entry{"hello.default.localhost": {route: "name"}, "::1": {route: "ipv6"}, "[::1]": {route: "bracketed"}}}
	for host, want := range map[string]string{
		"hello.default.localhost": "name", "hello.default.localhost:8080": "name", "HELLO.default.localhost:80": "name",
		"[::1]:8080": "ipv6", "[::1]": "bracketed", "a:b:c": "", "hello.default.localhost:": "name",
	} {
		got := ""
		if e := tbl.lookup(host); e != nil {
			got = e.route
		}
		if got != want {
			t.Errorf("lookup(%q) = %q, want %q", host, got, want)
		}
	}
}

// Every Route and tag answers at its in-cluster names on the internal
// listener alone (Knative's placeholder Services: <route>.<ns>.svc.cluster.local,
// .svc and <route>.<ns>; a tag's Service named by tag-template); a
// cluster-local Route answers only there; public hosts answer on both.
func TestBuildPrivateHosts(t *testing.T) {
	routes := []servingv1.Route{
		route("hello", nil, "http://hello.default.example.com",
			servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](0), Tag: "old", URL: "http://old-hello.default.example.com"},
			servingv1.TrafficTarget{RevisionName: "hello-2", Percent: ptr.To[int64](100)}),
		route("private", map[string]string{servingv1.VisibilityLabelKey: "cluster-local"}, "http://private.default.svc.cluster.local",
			servingv1.TrafficTarget{RevisionName: "private-1", Percent: ptr.To[int64](100)}),
		route("mixed", nil, "http://mixed.default.example.com",
			servingv1.TrafficTarget{RevisionName: "mixed-2", Percent: ptr.To[int64](100)},
			servingv1.TrafficTarget{RevisionName: "mixed-1", Percent: ptr.To[int64](0), Tag: "beta", URL: "http://beta-mixed.default.svc.cluster.local"}),
	}
	custom, err := config.ParseNetwork(map[string]string{"tag-template": "{{.Name}}-at-{{.Tag}}"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts     Options
		host     string
		external string // the revision the public listener routes to, "" for none
		internal string
	}{
		{Options{}, "hello.default.example.com", "default/hello-2", "default/hello-2"},
		{Options{}, "old-hello.default.example.com", "default/hello-1", "default/hello-1"},
		{Options{}, "hello.default.svc.cluster.local", "", "default/hello-2"},
		{Options{}, "hello.default.svc", "", "default/hello-2"},
		{Options{}, "HELLO.default:80", "", "default/hello-2"},
		{Options{}, "old-hello.default.svc.cluster.local", "", "default/hello-1"},
		{Options{}, "private.default.svc.cluster.local", "", "default/private-1"},
		{Options{}, "private.default", "", "default/private-1"},
		{Options{}, "private.default.example.com", "", ""},
		{Options{}, "mixed.default.example.com", "default/mixed-2", "default/mixed-2"},
		{Options{}, "beta-mixed.default.svc.cluster.local", "", "default/mixed-1"},
		{Options{Network: custom}, "hello-at-old.default.svc", "", "default/hello-1"},
		{Options{Network: custom}, "old-hello.default.svc", "", ""},
	} {
		tbl := tc.opts.Build(routes, nil)
		req := httptest.NewRequest(http.MethodGet, "http://"+tc.host+"/", nil)
		for _, side := range []struct {
			name string
			e    *entry
			want string
		}{{"public", tbl.route(req), tc.external}, {"internal", tbl.routeInternal(req), tc.internal}} {
			got := ""
			if side.e != nil {
				got = side.e.pick().revision
			}
			if got != side.want {
				t.Errorf("%s on the %s listener: %q, want %q", tc.host, side.name, got, side.want)
			}
		}
	}
}
