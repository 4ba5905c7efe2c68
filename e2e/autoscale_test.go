//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	"github.com/knitops/knit/internal/httpload"
)

// TestAutoscaleJourney is the data-plane issue's journey: examples/autoscale
// at target 10 under a bounded load of concurrency 30 scales out to 3+
// replicas, returns to zero once the load stops, and cold-starts on the
// next request, with no request failing anywhere.
func TestAutoscaleJourney(t *testing.T) {
	d := startKnitDev(t, filepath.Join(t.TempDir(), "state"))
	c := d.client(t)
	// Knative's own knobs, shortened so the journey takes a minute, not five.
	setAutoscalerConfig(t, c, map[string]string{"stable-window": "10s", "scale-to-zero-grace-period": "5s"})
	if out, err := d.kubectl(t, "apply", "-f", "examples/autoscale/service.yaml"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	host := "autoscale.default.localhost"
	waitBody(t, d.httpAddr, host, "Nothing asked: try ?sleep=100&prime=10000&bloat=5", 3*time.Minute)
	pa := func(ctx context.Context) (*autoscalingv1alpha1.PodAutoscaler, error) {
		pa := &autoscalingv1alpha1.PodAutoscaler{}
		return pa, c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "autoscale-00001"}, pa)
	}

	loadClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 30}, Timeout: 30 * time.Second}
	load := httpload.Start(loadClient, "http://"+d.httpAddr+"/?sleep=100", host, 30, 90*time.Second)
	var peak int32
	waitFor(t, "scale out to 3+ ready replicas under load", 80*time.Second, func(ctx context.Context) (bool, string) {
		p, err := pa(ctx)
		if err != nil {
			return false, err.Error()
		}
		desired, actual := ptr.Deref(p.Status.DesiredScale, -1), ptr.Deref(p.Status.ActualScale, -1)
		peak = max(peak, actual)
		return actual >= 3, fmt.Sprintf("desired %d actual %d", desired, actual)
	})
	res := load.Stop()
	sent, failed := res.Sent, res.Failed
	t.Logf("load: %d requests, peak %d replicas", sent, peak)
	if sent == 0 || failed != 0 {
		t.Fatalf("load: %d of %d requests failed; first failures: %q", failed, sent, res.Failures)
	}

	waitFor(t, "back to zero after the load", 90*time.Second, func(ctx context.Context) (bool, string) {
		p, err := pa(ctx)
		if err != nil {
			return false, err.Error()
		}
		desired, actual := ptr.Deref(p.Status.DesiredScale, -1), ptr.Deref(p.Status.ActualScale, -1)
		return actual == 0 && desired == 0, fmt.Sprintf("desired %d actual %d", desired, actual)
	})

	began := time.Now()
	code, body, err := get(d.httpAddr, host)
	if err != nil || code != http.StatusOK {
		t.Fatalf("cold start: %d %q %v", code, body, err)
	}
	t.Logf("cold start answered in %s", time.Since(began).Round(time.Millisecond))
}
