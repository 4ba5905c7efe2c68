//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/knitops/knit/internal/httpload"
	"github.com/knitops/knit/internal/poll"
)

// ignoreTermService runs an app that ignores SIGTERM, one replica per
// revision.
func ignoreTermService(version string) string {
	return fmt.Sprintf(`apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: stubborn
  namespace: default
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/max-scale: "1"
    spec:
      # The pod's grace period is the Revision's timeout, as in Knative,
      # and knit dev gives a stopped replica all of it.
      timeoutSeconds: 8
      containers:
        - image: ko://github.com/knitops/knit/e2e/apps/ignoreterm
          env:
            - name: VERSION
              value: %s
`, version)
}

// Replacing the replicas of an app that ignores SIGTERM, under steady
// load, fails no request: a replica leaves the endpoints first, finishes
// what it has, then gets SIGTERM, and SIGKILL after its grace period.
func TestReplacingAnAppThatIgnoresSIGTERMFailsNoRequest(t *testing.T) {
	d := startKnitDev(t, t.TempDir())
	// Knative's windows, shortened: a replaced revision's replica goes at
	// scale to zero, seconds after its traffic moved on.
	setAutoscalerConfig(t, d.client(t), map[string]string{"stable-window": "6s", "scale-to-zero-grace-period": "2s"})
	apply := func(version string) {
		t.Helper()
		f := filepath.Join(t.TempDir(), "stubborn.yaml")
		if err := os.WriteFile(f, []byte(ignoreTermService(version)), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := d.kubectl(t, "apply", "-f", f); err != nil {
			t.Fatalf("kubectl apply: %v\n%s", err, out)
		}
	}
	waitReady := func(version string) {
		t.Helper()
		poll.Until(t, "stubborn "+version+" answering", 200*time.Millisecond, 2*time.Minute, func(context.Context) (bool, string) {
			code, body, err := get(d.httpAddr, "stubborn.default.localhost")
			return err == nil && code == http.StatusOK && body == "still here "+version, fmt.Sprintf("%d %q %v", code, body, err)
		})
	}
	apply("v1")
	waitReady("v1")

	load := httpload.Start(http.DefaultClient, "http://"+d.httpAddr+"/", "stubborn.default.localhost", 4, 2*time.Minute)
	for _, v := range []string{"v2", "v3"} {
		apply(v)
		waitReady(v)
		// The old replica ignores SIGTERM: it goes at SIGKILL, after the
		// grace period; keep the load on until then.
		poll.Until(t, "one replica left", 200*time.Millisecond, 90*time.Second, func(context.Context) (bool, string) {
			n := len(stubbornPIDs(t))
			return n == 1, fmt.Sprintf("%d replicas", n)
		})
	}
	res := load.Stop()
	t.Logf("%d requests across two replacements, %d failed", res.Sent, res.Failed)
	if res.Failed != 0 || res.Sent == 0 {
		t.Errorf("%d of %d requests failed: %v", res.Failed, res.Sent, res.Failures)
	}
}

// stubbornPIDs are the running processes of the app, one per replica.
func stubbornPIDs(t *testing.T) []int {
	return replicaPIDs(t, func(argv []string) bool { return filepath.Base(argv[0]) == "ignoreterm" })
}
