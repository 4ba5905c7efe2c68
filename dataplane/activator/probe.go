package activator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/knitops/knit/dataplane/forward"
)

// The probe the queue-proxy answers itself, as Knative's activator sends
// it: 200 with body "queue" when the replica is ready.
const (
	probeHeader    = forward.NetworkProbeHeader
	probeValue     = "queue"
	probeUserAgent = "Knative-Activator-Probe"
)

// How a candidate is probed until it first answers: every
// fastProbeInterval for its first fastProbeFor, as the queue-proxy probes
// its app and the kubelet a new container, so a cold start is seen within
// milliseconds (a refused dial on a pod's network costs microseconds);
// then 25ms doubling up to a second, so one that stays unready for long
// costs a probe a second.
const (
	fastProbeInterval = 5 * time.Millisecond
	fastProbeFor      = 250 * time.Millisecond
)

// probeBackoff is the wait after a failed probe of a candidate probed
// since elapsed ago; slow counts the failures after its fast ones.
func probeBackoff(elapsed time.Duration, slow int) time.Duration {
	if elapsed < fastProbeFor {
		return fastProbeInterval
	}
	d := 25 * time.Millisecond
	for range slow {
		d *= 2
		if d >= time.Second {
			return time.Second
		}
	}
	return d
}

// probe asks the queue-proxy at addr whether its replica is ready. It
// goes through the proxy's transport, so the connection it opens is the
// one the first request reuses.
func probe(ctx context.Context, rt http.RoundTripper, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return err
	}
	req.Header[probeHeader] = []string{probeValue}
	req.Header["User-Agent"] = []string{probeUserAgent}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || string(body) != probeValue {
		return fmt.Errorf("probe of %s answered %d %q", addr, resp.StatusCode, body)
	}
	return nil
}

// probeUntilReady probes addr with backoff until it answers ready, then
// adds it to the Revision's ready endpoints, unless c was replaced or
// stopped meanwhile.
func (r *revision) probeUntilReady(ctx context.Context, addr string, c *candidate) {
	began, slow := time.Now(), 0
	for attempt := 0; ; attempt++ {
		err := probe(ctx, r.a.transport.HTTP1, addr, r.a.opts.ProbeTimeout)
		if err == nil {
			r.mu.Lock()
			if r.candidates[addr] == c && ctx.Err() == nil {
				c.ready = true
				r.thr.add(addr)
			}
			r.mu.Unlock()
			return
		}
		if attempt == 0 {
			r.a.log.Debug("Replica not ready yet", "revision", r.name, "addr", addr, "err", err)
		}
		wait := probeBackoff(time.Since(began), slow)
		if wait > fastProbeInterval {
			slow++
		}
		if forward.Pause(ctx, wait) != nil {
			return
		}
	}
}
