package activator

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Reporter is what the activator tells the autoscaler. dataplane/kpa's
// KPA implements it in process; HTTPReporter sends it over HTTP.
type Reporter interface {
	// Poke says a request waits for a Revision with no ready replica:
	// decide now rather than on the next tick.
	Poke(rev types.NamespacedName)
	// ActivatorLoad is the Revision's load the activator held over the
	// last window: average requests in it (waiting or in flight) and
	// arrivals per second.
	ActivatorLoad(rev types.NamespacedName, concurrency, rps float64)
}

// flusher is a Reporter that batches: Flush ends a report round.
type flusher interface{ Flush() }

type discard struct{}

func (discard) Poke(types.NamespacedName)                            {}
func (discard) ActivatorLoad(types.NamespacedName, float64, float64) {}

// Activator is the http.Handler requests for Revisions in Proxy mode
// reach. Safe for concurrent use.
type Activator struct {
	opts      Options
	log       *slog.Logger
	transport *transport
	metrics   *metrics
	handler   http.Handler
	// ctx bounds the probers; Start cancels it when it returns.
	ctx  context.Context
	stop context.CancelFunc

	mu   sync.RWMutex
	revs map[types.NamespacedName]*revision
	// peers is where this activator stands among the activators, which
	// every Revision's throttler splits its replicas by; guarded by mu,
	// set by setPeers, which peersMu keeps one at a time.
	peers   peers
	peersMu sync.Mutex

	// expected are replicas announced ahead of their slices
	// (ExpectSlices).
	expected expected

	// resolve, set by SetupWithManager, reads a Revision the activator
	// does not know yet from the manager's cache: a request may arrive
	// before the reconciler saw its Revision.
	resolve func(ctx context.Context, key types.NamespacedName) error
}

// New returns an activator that knows no Revision: feed it with
// SetupWithManager or SetEndpoints.
func New(opts Options) (*Activator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	a := &Activator{
		opts:      opts,
		log:       opts.Logger,
		transport: newTransport(),
		ctx:       ctx,
		stop:      stop,
		revs:      map[types.NamespacedName]*revision{},
	}
	var err error
	if a.metrics, err = newMetrics(opts.Registry, a); err != nil {
		stop()
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	a.handler = a.stack()
	return a, nil
}

// stack builds the handler chain. This is the one place the order is
// written; the request enters at the last line.
func (a *Activator) stack() http.Handler {
	var h http.Handler = newProxy(a.transport, a.log)
	h = &throttleHandler{next: h}
	h = &statsHandler{next: h}
	h = &metricsHandler{next: h}
	h = &revisionHandler{next: h, lookup: a.lookup, routes: a.opts.RouteKeys}
	return h
}

// ServeHTTP buffers the request until its Revision has a free ready
// replica, then proxies it there.
func (a *Activator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.handler.ServeHTTP(w, r)
}

// Start reports load and repeats pokes every StatsInterval until ctx
// ends, then stops probing replicas and closes idle connections. It
// implements manager.Runnable; SetupWithManager adds it.
func (a *Activator) Start(ctx context.Context) error {
	defer a.transport.CloseIdleConnections()
	defer a.stop()
	ticker := time.NewTicker(a.opts.StatsInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-ticker.C:
			a.report(now)
		}
	}
}

// NeedLeaderElection is false: every activator replica serves.
func (a *Activator) NeedLeaderElection() bool { return false }

// SetEndpoints sets a Revision's containerConcurrency (0: unlimited) and
// its replicas' queue-proxy addresses (host:port), as the EndpointSlice
// reconciler does; for running without an API server (benchmarks). Each
// new address is probed before it takes traffic. Its requests wait at
// most MaxWait.
func (a *Activator) SetEndpoints(rev types.NamespacedName, containerConcurrency int64, addrs []string) {
	a.update(rev, revisionConfig{containerConcurrency: int(max(containerConcurrency, 0)), wait: a.opts.MaxWait}, endpointSet{ready: addrs})
}

// Forget drops a Revision: its waiting requests fail with 503 and later
// ones are unknown.
func (a *Activator) Forget(rev types.NamespacedName) {
	a.mu.Lock()
	r, ok := a.revs[rev]
	delete(a.revs, rev)
	a.mu.Unlock()
	if ok {
		r.close()
		a.metrics.forget(rev)
	}
}

func (a *Activator) update(key types.NamespacedName, cfg revisionConfig, eps endpointSet) {
	a.mu.Lock()
	r, ok := a.revs[key]
	if !ok {
		r = newRevision(a, key, cfg)
		a.revs[key] = r
	}
	a.mu.Unlock()
	if ok {
		r.thr.configure(cfg.containerConcurrency, cfg.wait)
	}
	r.setEndpoints(&eps, func() []string { return a.expected.announcedFor(key, time.Now()) })
}

// setPeers places this activator among the activators and rebalances
// every Revision; their waiting requests keep their place.
func (a *Activator) setPeers(p peers) {
	a.peersMu.Lock()
	defer a.peersMu.Unlock()
	a.mu.Lock()
	old := a.peers
	a.peers = p
	a.mu.Unlock()
	if p == old {
		return
	}
	// A Revision made from here on reads p itself.
	a.log.Info("Activator's place among the activators changed; rebalancing every revision",
		"index", p.index, "activators", p.count, "previousIndex", old.index, "previousActivators", old.count)
	for _, r := range a.revisions() {
		r.thr.setPeers(p)
	}
}

func (a *Activator) get(key types.NamespacedName) *revision {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.revs[key]
}

// lookup returns the Revision's state, reading it from the manager's
// cache when the reconciler has not yet.
func (a *Activator) lookup(ctx context.Context, key types.NamespacedName) (*revision, error) {
	if r := a.get(key); r != nil {
		return r, nil
	}
	if a.resolve != nil {
		if err := a.resolve(ctx, key); err != nil {
			return nil, fmt.Errorf("activator: looking up revision %s: %w", key, err)
		}
		if r := a.get(key); r != nil {
			return r, nil
		}
	}
	return nil, fmt.Errorf("activator: %w %s", ErrUnknownRevision, key)
}

// revisions is a snapshot of the Revisions known.
func (a *Activator) revisions() []*revision {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]*revision, 0, len(a.revs))
	for _, r := range a.revs {
		out = append(out, r)
	}
	return out
}
