//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"
)

// TestServiceCallsServiceInKnitDev: one app calls another as on a
// cluster. A cluster-local backend answers a frontend at
// http://backend.default.svc.cluster.local, .svc and http://backend.default
// (the names Knative's placeholder Service answers to; the short ones
// found through the search domains), and is not served to this machine
// at any of those names; the frontend reaches a public
// Service at its URL too. Isolated replicas only: their gateway resolves
// and serves these names, which needs a network namespace (root).
func TestServiceCallsServiceInKnitDev(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: replicas reach other Services through the gateway of their own network namespace, which only root can make")
	}
	d := startKnitDev(t, t.TempDir())
	_, port, _ := net.SplitHostPort(d.httpAddr)
	d.apply(t, `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: backend
  namespace: default
  labels:
    networking.knative.dev/visibility: cluster-local
spec:
  template:
    spec:
      containers:
        - image: ko://github.com/knitops/knit/examples/helloworld
          env:
            - name: TARGET
              value: backend
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: frontend
  namespace: default
spec:
  template:
    spec:
      containers:
        - image: ko://github.com/knitops/knit/e2e/apps/caller
`)
	call := func(target string) (int, string, error) {
		return getPath(d.httpAddr, "frontend.default.localhost", "/?url="+url.QueryEscape(target))
	}
	waitFor(t, "the frontend calls the backend by its in-cluster name", 3*time.Minute, func(context.Context) (bool, string) {
		code, body, err := call("http://backend.default.svc.cluster.local")
		return err == nil && code == http.StatusOK && body == "200 Hello backend!", fmt.Sprintf("%d %q %v", code, body, err)
	})
	for target, want := range map[string]string{
		"http://backend.default.svc.cluster.local/": "200 Hello backend!",
		"http://backend.default.svc":                "200 Hello backend!",
		"http://backend.default":                    "200 Hello backend!",
		// The frontend's own public URL, from inside: it answers itself.
		"http://frontend.default.localhost:" + port + "/": "400 caller: ?url= names what to call",
	} {
		if code, body, err := call(target); err != nil || code != http.StatusOK || body != want {
			t.Errorf("frontend calling %s: %d %q %v; want 200 %q", target, code, body, err, want)
		}
	}
	for _, host := range []string{"backend.default.svc.cluster.local", "backend.default", "backend.default.localhost"} {
		if code, _, err := get(d.httpAddr, host); err != nil || code != http.StatusNotFound {
			t.Errorf("this machine asking the ingress for %s: %d %v, want 404 (cluster-local)", host, code, err)
		}
	}
}
