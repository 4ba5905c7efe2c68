package ingress

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/config"
)

// tagApp is a loopback app answering with its name and the routing
// headers it was sent: "<name> tag=<Knative-Serving-Tag> default=<Knative-Serving-Default-Route>".
func tagApp(t *testing.T, name string) int32 {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s tag=%s default=%s", name, strings.Join(r.Header.Values(TagHeader), ","), strings.Join(r.Header.Values(DefaultRouteHeader), ","))
	}))
	t.Cleanup(srv.Close)
	return int32(srv.Listener.Addr().(*net.TCPAddr).Port)
}

// helloSlices put hello-1 on app "one" and hello-2 on app "two".
func helloSlices(t *testing.T) []discoveryv1.EndpointSlice {
	return []discoveryv1.EndpointSlice{slice("hello-1", tagApp(t, "one"), true, "127.0.0.1"), slice("hello-2", tagApp(t, "two"), true, "127.0.0.1")}
}

// get sends a request through front, to host, with these headers.
func get(t *testing.T, front, host string, header http.Header) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, front, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s with %v: %d %s", host, header, resp.StatusCode, body)
	}
	return string(body)
}

// What a client and the app see of tag-header-based-routing, over HTTP.
// On: Knative-Serving-Tag on the main host reaches the tag's Revision at
// 0%; an unknown tag reaches the split; the app learns the way the
// request came (Knative-Serving-Default-Route: true through the split,
// whatever a client said; Knative-Serving-Tag through a tag's host). Off:
// the split answers, and the app gets the client's headers as they came.
func TestRouterTagHeaderRouting(t *testing.T) {
	slices := helloSlices(t)
	tag := func(v ...string) http.Header { return http.Header{TagHeader: v} }
	for _, tc := range []struct {
		name    string
		host    string
		header  http.Header
		off, on string
	}{
		{"main host", "hello.default.localhost", nil, "two tag= default=", "two tag= default=true"},
		{"main host, a tag at 0%", "hello.default.localhost", tag("old"), "two tag=old default=", "one tag=old default="},
		{"main host, an unknown tag", "hello.default.localhost", tag("nope"), "two tag=nope default=", "two tag=nope default=true"},
		{"main host, a client's default-route", "hello.default.localhost", http.Header{DefaultRouteHeader: {"false"}}, "two tag= default=false", "two tag= default=true"},
		{"tag host", "old-hello.default.localhost", nil, "one tag= default=", "one tag=old default="},
		{"tag host, another tag", "old-hello.default.localhost", tag("nope"), "one tag=nope default=", "one tag=old default="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, opts := range []Options{{}, {TagHeaderRouting: true}} {
				r := NewRouter()
				r.Update(opts.Build(hello(), slices))
				front := httptest.NewServer(r)
				got := get(t, front.URL, tc.host, tc.header)
				front.Close()
				want := tc.off
				if opts.TagHeaderRouting {
					want = tc.on
				}
				if got != want {
					t.Errorf("%+v: the app answered %q, want %q", opts, got, want)
				}
			}
		})
	}
}

// errorCount is a logger that counts its error lines.
func errorCount() (logr.Logger, *int) {
	n := new(int)
	return funcr.New(func(prefix, args string) {
		if strings.Contains(args, `"error"`) {
			*n++
		}
	}, funcr.Options{}), n
}

// The builder follows edits of config-features: absent is Knative's
// default (off), Enabled turns tag-header routing on, a value the parser
// refuses keeps what was in force and is logged once however many
// rebuilds follow, Disabled turns it off, and so does deleting the map.
func TestBuilderFollowsConfigFeatures(t *testing.T) {
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	routes := hello()
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&routes[0]).Build()
	r := NewRouter()
	b := &tableBuilder{client: c, edge: c, router: r}
	log, errors := errorCount()
	ctx := logr.NewContext(context.Background(), log)
	tagged := func() bool {
		t.Helper()
		if _, err := b.Reconcile(ctx, tableKey); err != nil {
			t.Fatal(err)
		}
		return routeOf(r.table.Load(), "hello.default.localhost", "old").Revision == "default/hello-1"
	}
	if tagged() {
		t.Fatal("without config-features a tag header routes")
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: config.FeaturesConfigName},
		Data:       map[string]string{"tag-header-based-routing": "Enabled"},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if !tagged() {
		t.Fatal("tag-header-based-routing: Enabled: the tag header does not route")
	}
	edit := func(value string) {
		t.Helper()
		cm.Data["tag-header-based-routing"] = value
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	edit("Enabld")
	for i := range 3 { // a Route or slice event each
		if !tagged() {
			t.Fatalf("rebuild %d after a typo: tag-header routing is off, want the previous Enabled in force", i)
		}
	}
	if *errors != 1 {
		t.Errorf("a refused config-features logged %d errors over 3 rebuilds, want 1", *errors)
	}
	edit("Disabled")
	if tagged() {
		t.Fatal("tag-header-based-routing: Disabled: the tag header still routes")
	}
	edit("Enabled")
	if !tagged() {
		t.Fatal("Enabled again: the tag header does not route")
	}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if tagged() {
		t.Fatal("config-features deleted: the tag header still routes, want Knative's default")
	}
	if *errors != 1 {
		t.Errorf("%d errors logged in all, want the typo's one", *errors)
	}
}
