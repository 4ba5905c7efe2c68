package queue

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"
)

// Admin and metrics paths.
const (
	// HealthPath on the admin port answers 200 while the user container is
	// ready and the queue is not draining, 503 otherwise.
	HealthPath = "/healthz"
	// DrainPath on the admin port is Knative's preStop hook for the user
	// container: it starts draining and answers once no request arrived
	// for the quiet period and none is in flight.
	DrainPath = "/wait-for-drain"
	// MetricsPath on the metrics port serves Prometheus metrics.
	MetricsPath = "/metrics"
)

// adminMux serves the admin port.
func (s *Server) adminMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(HealthPath, func(w http.ResponseWriter, r *http.Request) {
		draining := s.drain.Draining()
		writeHealth(w, !draining && s.prober.ReadyHeld(r.Context()), draining, "ok\n", s.prober.NotReadyReason)
	})
	mux.HandleFunc(DrainPath, func(w http.ResponseWriter, r *http.Request) {
		if s.waitForDrain(r.Context()) {
			fmt.Fprint(w, "not drained: the queue-proxy is not stopping, only the app restarts\n")
			return
		}
		fmt.Fprintf(w, "drained: %d requests in flight\n", s.tracker.Inflight())
	})
	if s.cfg.EnableProfiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// metricsMux serves the metrics port.
func (s *Server) metricsMux(reg *metricsRegistry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, reg)
	mux.Handle(StatsPath, s.stats)
	return mux
}

// drainCancelAfter is how long the app's preStop hook waits for the
// queue-proxy's own SIGTERM. When a pod ends, every container is stopped
// at once and the queue-proxy (which has no preStop hook) gets it at
// once; when it does not, the kubelet (or knit's local runtime) is
// restarting the app alone after a failed liveness probe, and the hook
// must return so the app restarts. Knative's queue-proxy gives up after
// the same second.
const drainCancelAfter = time.Second

// waitForDrain is the preStop hook's wait. It never starts a drain
// itself: the admin port must be reachable from the pod network for the
// kubelet's hook, so anyone on it can call this, and a call that drained
// would take the replica out of its endpoints. The drain belongs to
// Serve, which starts it on the queue-proxy's SIGTERM; the hook waits up
// to drainCancelAfter for that and then until the quiet period passed
// and no request is in flight. cancelled is true when the queue-proxy is
// not stopping (a liveness restart, or a caller that is not the kubelet):
// nothing changed and the app may restart at once.
func (s *Server) waitForDrain(ctx context.Context) (cancelled bool) {
	t := time.NewTimer(drainCancelAfter)
	defer t.Stop()
	select {
	case <-s.stopping:
	case <-t.C:
		return true
	case <-ctx.Done():
		return true
	}
	if s.cfg.RevisionTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.DrainQuietPeriod+s.cfg.RevisionTimeout)
		defer cancel()
	}
	s.drain.waitQuiet(ctx, s.cfg.DrainQuietPeriod)
	s.waitIdle(ctx)
	return false
}

// waitIdle returns once no request is inside the queue-proxy (hijacked
// websocket connections included), or when ctx ends.
func (s *Server) waitIdle(ctx context.Context) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for s.tracker.Inflight() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
