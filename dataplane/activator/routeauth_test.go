package activator

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/knitops/knit/internal/hopauth"
)

// The activator's Service is reachable from every pod, and it proxies to
// whichever Revision the Knative-Serving-* headers name: a request must
// carry the ingress's signature of exactly that Revision, or it is
// refused before anything of the Revision is touched, and the signature
// never reaches the app.
func TestRoutingHeadersNeedTheIngressSignature(t *testing.T) {
	keys := hopauth.Generate()
	a, url := startActivator(t, Options{RouteKeys: keys})
	seen := make(chan http.Header, 10)
	q := newFakeQueue(t, true, func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		w.Write([]byte("hello from the replica"))
	})
	a.SetEndpoints(rev, 1, []string{q.addr()})
	other := rev
	other.Name = "hello-00002"
	now := time.Now()
	for _, tc := range []struct {
		name string
		sig  string
		want int
	}{
		{"no signature", "", http.StatusForbidden},
		{"another key's signature", hopauth.Generate().SignRoute(rev.Namespace, rev.Name, now), http.StatusForbidden},
		{"a signature of another revision", keys.SignRoute(other.Namespace, other.Name, now), http.StatusForbidden},
		{"an expired signature", keys.SignRoute(rev.Namespace, rev.Name, now.Add(-hopauth.MaxSkew-time.Minute)), http.StatusForbidden},
		{"the ingress's signature", keys.SignRoute(rev.Namespace, rev.Name, now), http.StatusOK},
	} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		req.Header.Set(NamespaceHeader, rev.Namespace)
		req.Header.Set(RevisionHeader, rev.Name)
		if tc.sig != "" {
			req.Header.Set(hopauth.RouteHeader, tc.sig)
		}
		resp, err := newClient(t).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	if n := len(seen); n != 1 {
		t.Fatalf("the replica saw %d requests, want only the signed one", n)
	}
	if h := <-seen; h.Get(hopauth.RouteHeader) != "" {
		t.Errorf("the replica saw %s; it must stay between the ingress and the activator", hopauth.RouteHeader)
	}
}
