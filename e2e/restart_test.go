//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/internal/httpload"
	"github.com/knitops/knit/local/dev"
)

// helloService is examples/helloworld as Service name, answering
// "Hello <target>!", kept at min-scale or above.
func helloService(name, minScale, target string) string {
	return fmt.Sprintf(`apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: %s
  namespace: default
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/min-scale: "%s"
        autoscaling.knative.dev/max-scale: "2"
    spec:
      containers:
        - image: ko://github.com/knitops/knit/examples/helloworld
          env:
            - name: TARGET
              value: %s
`, name, minScale, target)
}

func (d *knitDev) apply(t *testing.T, manifest string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := d.kubectl(t, "apply", "-f", f); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

// restartLoad is the steady load both restarts run under: four workers,
// each request allowed a minute (a whole restart holds some that long).
func restartLoad(d *knitDev, host string) *httpload.Load {
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	return httpload.Start(c, "http://"+d.httpAddr+"/", host, 4, 4*time.Minute)
}

// waitServed waits until the load has sent n more requests, so each phase
// of a journey is measured under traffic.
func waitServed(t *testing.T, load *httpload.Load, n int64) {
	t.Helper()
	from := load.Sent()
	waitFor(t, fmt.Sprintf("%d more requests", n), time.Minute, func(context.Context) (bool, string) {
		return load.Sent() >= from+n, fmt.Sprintf("%d sent", load.Sent()-from)
	})
}

// A restart of knit dev's controllers (SIGHUP), twice, under steady load,
// fails no request: the ingress, the activator, the replicas, admission
// and the Git server run on their own manager and never stop. The new
// controllers still do their job: a change rolls out under the same load.
func TestRestartingTheControllersFailsNoRequest(t *testing.T) {
	d := startKnitDev(t, t.TempDir())
	host := "steady.default.localhost"
	d.apply(t, helloService("steady", "1", "v1"))
	waitBody(t, d.httpAddr, host, "Hello v1!", 3*time.Minute)

	load := restartLoad(d, host)
	waitServed(t, load, 200)
	for i := 1; i <= 2; i++ {
		if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("restart %d of the controllers", i), time.Minute, func(context.Context) (bool, string) {
			n := strings.Count(d.output.String(), dev.RestartedLine)
			return n == i, fmt.Sprintf("%d restarts announced", n)
		})
		waitServed(t, load, 200)
	}
	d.apply(t, helloService("steady", "1", "v2"))
	waitBody(t, d.httpAddr, host, "Hello v2!", 2*time.Minute)
	res := load.Stop()
	t.Logf("%d requests across two restarts of the controllers and a rollout, %d failed", res.Sent, res.Failed)
	if res.Failed != 0 || res.Sent == 0 {
		t.Errorf("%d of %d requests failed: %v", res.Failed, res.Sent, res.Failures)
	}
	if n := len(d.children(t)); n == 0 {
		t.Error("knit dev has no children left: did it restart whole?")
	}
}

// A restart of the whole knit dev process (SIGTERM, then a new knit dev
// on the same state directory and addresses) under steady load: requests
// fail only while no process listens (the old one's exit, the new one's
// start until it binds); once bound, the new one holds requests instead
// of answering 404 before it has read its routes or 502 to endpoints of
// replicas that died with the old one, and a revision at zero answers the
// first request after the banner through the activator. Replicas are not
// adopted: they die with the knit dev that started them. The numbers are
// logged, not asserted: they are this machine's.
func TestRestartingKnitDevUnderLoad(t *testing.T) {
	state := t.TempDir()
	d := startKnitDev(t, state)
	c := d.client(t)
	setAutoscalerConfig(t, c, map[string]string{"stable-window": "6s", "scale-to-zero-grace-period": "2s"})
	steady, sleepy := "steady.default.localhost", "sleepy.default.localhost"
	d.apply(t, helloService("steady", "1", "steady"))
	d.apply(t, helloService("sleepy", "0", "sleepy"))
	waitBody(t, d.httpAddr, steady, "Hello steady!", 3*time.Minute)
	waitBody(t, d.httpAddr, sleepy, "Hello sleepy!", 3*time.Minute)
	waitFor(t, "sleepy at zero", 2*time.Minute, func(ctx context.Context) (bool, string) {
		dep := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "sleepy-00001-deployment"}, dep); err != nil {
			return false, err.Error()
		}
		return ptr.Deref(dep.Spec.Replicas, 1) == 0 && dep.Status.Replicas == 0,
			fmt.Sprintf("%d wanted, %d running", ptr.Deref(dep.Spec.Replicas, 1), dep.Status.Replicas)
	})

	load := restartLoad(d, steady)
	waitServed(t, load, 200)
	stopping := time.Now()
	if err := d.stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.output)
	}
	exited := time.Now()
	d2 := startKnitDevOn(t, state, d.httpAddr, d.gitAddr)
	code, body, err := get(d2.httpAddr, sleepy)
	coldStart := time.Since(d2.ready)
	if err != nil || code != http.StatusOK || body != "Hello sleepy!" {
		t.Errorf("the first request to a revision at zero after the restart: %d %q %v, want 200 Hello sleepy!", code, body, err)
	}
	waitServed(t, load, 500)
	res := load.Stop()

	t.Logf("old knit dev exited %.2fs after SIGTERM; the new one was ready %.2fs after it started; a revision at zero answered %.2fs after ready",
		exited.Sub(stopping).Seconds(), d2.ready.Sub(d2.started).Seconds(), coldStart.Seconds())
	t.Logf("%d requests, %d failed (%d without an answer, statuses %v) between %s and %s (%.2fs); longest time without a 200: %.2fs, ending %s",
		res.Sent, res.Failed, res.Errors, res.Statuses, clock(res.FirstFailure), clock(res.LastFailure),
		res.LastFailure.Sub(res.FirstFailure).Seconds(), res.LongestGap.Seconds(), clock(res.GapEnd))
	t.Logf("SIGTERM %s, exited %s, new process %s, ready %s", clock(stopping), clock(exited), clock(d2.started), clock(d2.ready))
	// While the old knit dev exits, requests may fail: the target is that
	// a whole restart cost at most the seconds of that exit, measured and
	// logged above. Its last moments may answer 502 as replicas go (seen
	// twice in 149,360 on a loaded machine); after the new one is ready
	// nothing may fail.
	if len(res.Statuses) != 0 {
		t.Logf("answers other than 200 while the old knit dev exited: %v (first of each: %v)", res.Statuses, res.Examples)
	}
	if res.Failed > 0 && !res.LastFailure.Before(d2.ready) {
		t.Errorf("a request failed at %s, after the new knit dev was ready at %s: %v", clock(res.LastFailure), clock(d2.ready), res.Failures)
	}
}

func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("15:04:05.000")
}
