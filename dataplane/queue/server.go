package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/knitops/knit/dataplane/forward"
)

// Server is one running queue-proxy: its listeners are bound by
// NewServer, so callers can read the addresses before Serve.
type Server struct {
	cfg       Config
	log       *slog.Logger
	tracker   *requestTracker
	stats     *statsReporter
	prober    *prober
	drain     *drainer
	stopping  chan struct{} // closed when Serve's ctx ends
	breaker   *Breaker      // nil when containerConcurrency is 0
	transport *appTransport
	handler   http.Handler

	serving, admin, metrics       *http.Server
	servingLn, adminLn, metricsLn net.Listener
}

// Run serves cfg until ctx ends, then drains and returns nil; see
// Server.Serve.
func Run(ctx context.Context, cfg Config) error {
	s, err := NewServer(cfg)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

// NewServer validates cfg, builds the handler stack and binds the three
// ports (a port of 0 picks a free one).
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	probes, err := parseProbes(cfg.ReadinessProbe, cfg.UserPort, cfg.AutodetectHTTP2)
	if err != nil {
		return nil, err // unreachable: Validate parsed it
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	log = log.With("revision", cfg.Revision, "pod", cfg.Pod)
	start := time.Now()
	s := &Server{
		cfg:       cfg,
		log:       log,
		tracker:   newRequestTracker(start),
		prober:    newProber(probes, log),
		drain:     newDrainer(),
		stopping:  make(chan struct{}),
		transport: newAppTransport(cfg.userAddr(), cfg.UserProtocol, cfg.ContainerConcurrency),
	}
	s.stats = newStatsReporter(s.tracker, Stat{
		Namespace: cfg.Namespace, Configuration: cfg.Configuration, Revision: cfg.Revision, PodName: cfg.Pod,
	})
	if cfg.ContainerConcurrency > 0 {
		s.breaker = NewBreaker(cfg.ContainerConcurrency, cfg.queueDepth())
	}

	reg := newMetricsRegistry()
	var queued func() int64
	if s.breaker != nil {
		queued = func() int64 { return int64(s.breaker.Queued()) }
	}
	labels := map[string]string{
		"namespace_name":     cfg.Namespace,
		"configuration_name": cfg.Configuration,
		"revision_name":      cfg.Revision,
		"pod_name":           cfg.Pod,
	}
	metrics := newRequestMetrics(reg, labels, s.tracker.Inflight, queued, s.prober.Ready)
	addGoMetrics(reg)
	addProcessMetrics(reg)
	s.handler = s.stack(metrics)

	listen := func(port int) (net.Listener, error) {
		return net.Listen("tcp", net.JoinHostPort(cfg.ListenHost, strconv.Itoa(port)))
	}
	if s.servingLn, err = listen(cfg.ServingPort); err != nil {
		return nil, fmt.Errorf("serving port: %w", err)
	}
	if s.adminLn, err = listen(cfg.AdminPort); err != nil {
		s.servingLn.Close()
		return nil, fmt.Errorf("admin port: %w", err)
	}
	if s.metricsLn, err = listen(cfg.MetricsPort); err != nil {
		s.servingLn.Close()
		s.adminLn.Close()
		return nil, fmt.Errorf("metrics port: %w", err)
	}

	s.serving = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: time.Minute, // slowloris; bodies and answers are bounded by the revision's timeouts
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		Protocols:         new(http.Protocols),
	}
	// No keep-alive connection lives forever, nor a 1 MiB head (net/http's defaults).
	forward.DefaultLimits.Apply(s.serving)
	s.serving.Protocols.SetHTTP1(true)
	s.serving.Protocols.SetUnencryptedHTTP2(true) // h2c from the activator and ingress (gRPC)
	s.admin = &http.Server{Handler: s.adminMux(), ReadHeaderTimeout: 10 * time.Second}
	s.metrics = &http.Server{Handler: s.metricsMux(reg), ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// stack builds the serving port's handler chain. This is the one place
// the order is written; the request enters at the first line.
func (s *Server) stack(metrics *requestMetrics) http.Handler {
	fwd := newAppForwarder(s.cfg.userAddr(), s.transport, s.log)
	if s.cfg.DisableFastPath {
		fwd.pool = nil // every request through the ReverseProxy (Config.DisableFastPath)
	}
	var h http.Handler = fwd
	if s.breaker != nil {
		h = &breakerHandler{next: h, breaker: s.breaker}
	}
	h = newTimeoutHandler(h, s.cfg.RevisionTimeout, s.cfg.ResponseStartTimeout, s.cfg.IdleTimeout)
	h = &statsHandler{next: h, tracker: s.tracker}
	h = &metricsHandler{next: h, metrics: metrics}
	if s.cfg.EnableRequestLog {
		h = &requestLogHandler{next: h, log: s.log}
	}
	h = &healthHandler{next: h, ready: s.prober.ReadyHeld, why: s.prober.NotReadyReason, drain: s.drain}
	return h
}

// ServingAddr is the address the app's traffic enters on.
func (s *Server) ServingAddr() net.Addr { return s.servingLn.Addr() }

// AdminAddr is the address of /healthz and /wait-for-drain.
func (s *Server) AdminAddr() net.Addr { return s.adminLn.Addr() }

// MetricsAddr is the address of /metrics and /stats.
func (s *Server) MetricsAddr() net.Addr { return s.metricsLn.Addr() }

// Ready reports whether the user container passes its readiness probe.
func (s *Server) Ready() bool { return s.prober.Ready() }

// Serve runs the queue-proxy until ctx ends or a port fails. On ctx's end
// it drains the way Knative's queue-proxy does: probes answer 503 at once
// so the replica leaves its endpoints, requests keep being served until
// none arrived for DrainQuietPeriod, then the serving port stops
// accepting connections and in-flight requests (websockets included) get
// up to RevisionTimeout to finish. It then returns nil.
func (s *Server) Serve(ctx context.Context) error {
	s.log.Info("Starting queue-proxy", "serving", s.ServingAddr().String(), "admin", s.AdminAddr().String(),
		"metrics", s.MetricsAddr().String(), "app", s.cfg.userAddr(), "containerConcurrency", s.cfg.ContainerConcurrency)
	probeCtx, stopProbes := context.WithCancel(context.Background())
	defer stopProbes()
	go s.prober.run(probeCtx)
	go s.sampleStats(probeCtx)

	errc := make(chan error, 3)
	for _, srv := range []struct {
		name string
		s    *http.Server
		ln   net.Listener
	}{{"serving", s.serving, s.servingLn}, {"admin", s.admin, s.adminLn}, {"metrics", s.metrics, s.metricsLn}} {
		go func() {
			if err := srv.s.Serve(srv.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s port: %w", srv.name, err)
			}
		}()
	}

	select {
	case err := <-errc:
		s.closeAll()
		return err
	case <-ctx.Done():
	}
	close(s.stopping)

	s.log.Info("Draining: answering probes unready", "quietPeriod", s.cfg.DrainQuietPeriod)
	limit := s.cfg.RevisionTimeout
	if limit <= 0 {
		limit = DefaultRevisionTimeout
	}
	quietCtx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainQuietPeriod+limit)
	for s.drain.waitQuiet(quietCtx, s.cfg.DrainQuietPeriod) {
		// A preStop hook's drain was cancelled as this shutdown began: drain again.
	}
	cancel()

	s.log.Info("Draining: closing the serving port", "inFlight", s.tracker.Inflight())
	drainCtx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := s.serving.Shutdown(drainCtx); err != nil {
		s.log.Warn("Draining: requests still in flight at the revision timeout; closing their connections", "err", err)
	}
	// Shutdown does not wait for hijacked connections (websockets).
	s.waitIdle(drainCtx)
	s.closeAll()
	s.log.Info("Queue-proxy stopped")
	return nil
}

// sampleStats folds the request counters into the stats window every
// second, which keeps their integer integrals from wrapping.
func (s *Server) sampleStats(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.stats.sample(now)
		}
	}
}

func (s *Server) closeAll() {
	for _, srv := range []*http.Server{s.serving, s.admin, s.metrics} {
		srv.Close()
	}
	s.transport.close()
}
