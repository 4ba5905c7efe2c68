package activator

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// revision is what the activator holds for one Revision: its throttler,
// its load for the autoscaler, its metrics, and a prober per endpoint the
// source (EndpointSlices or SetEndpoints) lists.
type revision struct {
	key     types.NamespacedName
	name    string // namespace/name
	a       *Activator
	thr     *throttler
	load    load
	metrics revisionMetrics

	mu sync.Mutex
	// candidates are the endpoints the source lists, ready or still
	// probed; nil once the Revision is forgotten.
	candidates map[string]*candidate
	// listed is what the source last listed, before announcements.
	listed endpointSet
}

// setEndpoints makes listed (when not nil) what the source lists and
// applies it with the endpoints announced ahead of it, in one step, so a
// concurrent listing and announcement cannot undo each other.
func (r *revision) setEndpoints(listed *endpointSet, announced func() []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if listed != nil {
		r.listed = *listed
	}
	r.setCandidatesLocked(r.listed.withAnnounced(announced()))
}

// candidate is one listed endpoint: its prober, whether it passed, and
// whether the source lists it ready.
type candidate struct {
	stop   context.CancelFunc
	ready  bool
	listed bool
}

// revisionConfig is what the throttler needs from a Revision's spec.
type revisionConfig struct {
	containerConcurrency int
	wait                 time.Duration
}

// configFor reads a Revision's containerConcurrency (nil is 0,
// unlimited) and how long its requests may wait: its timeoutSeconds,
// capped at maxWait (unset or 0 is maxWait).
func configFor(rev *servingv1.Revision, maxWait time.Duration) revisionConfig {
	cfg := revisionConfig{wait: maxWait}
	if cc := rev.Spec.ContainerConcurrency; cc != nil && *cc > 0 {
		cfg.containerConcurrency = int(*cc)
	}
	if ts := rev.Spec.TimeoutSeconds; ts != nil && *ts > 0 && time.Duration(*ts)*time.Second < maxWait {
		cfg.wait = time.Duration(*ts) * time.Second
	}
	return cfg
}

// newRevision is called with a.mu held, so it reads a.peers.
func newRevision(a *Activator, key types.NamespacedName, cfg revisionConfig) *revision {
	r := &revision{
		key:        key,
		name:       key.Namespace + "/" + key.Name,
		a:          a,
		metrics:    a.metrics.forRevision(key),
		candidates: map[string]*candidate{},
	}
	r.thr = newThrottler(r.name, a.opts.MaxWaiting, func() { a.opts.Reporter.Poke(key) }, a.opts.StatsInterval)
	r.thr.setPeers(a.peers)
	r.thr.configure(cfg.containerConcurrency, cfg.wait)
	r.load.reset(time.Now())
	return r
}

// setCandidatesLocked makes eps the Revision's endpoints. New ones, ready or
// not, are probed before they take traffic; vanished ones stop taking it
// at once; one the source no longer says is ready (its readiness probe
// failed) stops taking it and is probed again.
func (r *revision) setCandidatesLocked(eps endpointSet) {
	want := make(map[string]bool, len(eps.ready)+len(eps.notReady))
	for _, addr := range eps.notReady {
		want[addr] = false
	}
	for _, addr := range eps.ready {
		want[addr] = true
	}
	if r.candidates == nil {
		return
	}
	r.thr.list(eps.ready)
	for addr, c := range r.candidates {
		listed, ok := want[addr]
		switch {
		case !ok:
			c.stop()
			delete(r.candidates, addr)
			r.thr.remove(addr)
		case c.listed && !listed:
			c.stop()
			r.thr.remove(addr)
			r.startProbeLocked(addr, false)
		default:
			c.listed = listed
		}
	}
	for addr, listed := range want {
		if _, ok := r.candidates[addr]; !ok {
			r.startProbeLocked(addr, listed)
		}
	}
}

func (r *revision) startProbeLocked(addr string, listed bool) {
	ctx, stop := context.WithCancel(r.a.ctx)
	c := &candidate{stop: stop, listed: listed}
	r.candidates[addr] = c
	go r.probeUntilReady(ctx, addr, c)
}

// demote takes addr out of traffic after it refused a connection and
// probes it again until it answers or leaves the endpoints.
func (r *revision) demote(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.candidates[addr]
	if !ok || !c.ready {
		return
	}
	r.a.log.Debug("Replica refused a connection; probing it again", "revision", r.name, "addr", addr)
	c.stop()
	r.thr.remove(addr)
	r.startProbeLocked(addr, c.listed)
}

// close stops every prober and fails waiting requests.
func (r *revision) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.candidates {
		c.stop()
	}
	r.candidates = nil
	r.thr.close()
}
