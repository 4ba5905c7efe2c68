package activator

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Errors a request gets instead of an endpoint; the throttle handler
// answers them with 503 and a body naming the Revision.
var (
	// ErrNoCapacity: the request waited its limit for a replica.
	ErrNoCapacity = errors.New("no replica became available")
	// ErrQueueFull: the Revision's waiting line was full.
	ErrQueueFull = errors.New("too many requests waiting")
	// ErrRevisionGone: the Revision was deleted while the request waited.
	ErrRevisionGone = errors.New("revision deleted")
)

// throttleError is why a request got no endpoint: a message naming the
// Revision, which is the 503's body, and a sentinel for errors.Is.
type throttleError struct {
	msg  string
	kind error
}

func (e *throttleError) Error() string { return e.msg }
func (e *throttleError) Unwrap() error { return e.kind }

func throttleErrorf(kind error, format string, args ...any) error {
	return &throttleError{msg: fmt.Sprintf(format, args...), kind: kind}
}

// throttleHandler holds each request until its Revision has a free ready
// endpoint and hands that endpoint to the proxy.
type throttleHandler struct {
	next http.Handler
}

func (h *throttleHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := stateOf(r.Context())
	ep, err := st.rev.thr.acquire(r.Context())
	if err != nil {
		writeThrottleError(w, r, err)
		return
	}
	st.ep = ep
	defer func() {
		if st.ep != nil { // the proxy may have swapped it, or dropped it on a failed retry
			st.rev.thr.release(st.ep)
		}
	}()
	h.next.ServeHTTP(w, r)
}

// writeThrottleError answers a request that got no endpoint. A client
// that went away gets a 503 it will not read, which keeps the metrics
// honest (no silent 200).
func writeThrottleError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		err = fmt.Errorf("activator: request canceled while waiting: %w", context.Cause(r.Context()))
	}
	http.Error(w, err.Error(), http.StatusServiceUnavailable)
}

// throttler limits a Revision's requests to containerConcurrency per
// probed-ready endpoint, keeps up to maxWaiting more in a FIFO line for at
// most wait, and picks the endpoint each request goes to. Among several
// activators it uses only its share of the endpoints, or of their
// capacity (share.go).
type throttler struct {
	name string // namespace/name, for error messages

	mu         sync.Mutex
	cc         int // containerConcurrency; 0 is unlimited per endpoint
	wait       time.Duration
	maxWaiting int
	ready      []*endpoint // in the order they became ready
	listed     []string    // every address the source lists, sorted
	peers      peers
	// use are the endpoints of ready this activator sends to, in ready's
	// order, and limit how many requests may hold one at once:
	// rebalanceLocked sets them whenever ready, listed, peers or cc
	// change, so a pick only reads them.
	use      []*endpoint
	limit    int
	busy     int // requests holding an endpoint in ready, used or not
	cursor   int
	waiters  list.List // of *waiter, oldest first
	closed   bool
	lastPoke time.Time

	// poke tells the autoscaler requests wait with no ready replica; it
	// is called without the lock, at most once per pokeEvery.
	poke      func()
	pokeEvery time.Duration
}

// waiter is a request in line. ep is set, under the lock, when an
// endpoint is handed to it, and granted is then signalled.
type waiter struct {
	ep      *endpoint
	err     error
	granted chan struct{}
}

func newThrottler(name string, maxWaiting int, poke func(), pokeEvery time.Duration) *throttler {
	return &throttler{name: name, maxWaiting: maxWaiting, poke: poke, pokeEvery: pokeEvery}
}

// acquire returns a free endpoint, waiting in line for one if need be.
// A request that must wait while no endpoint is ready pokes the
// autoscaler at once, unless a poke went out in the last pokeEvery.
// Every endpoint returned must be given back with release.
func (t *throttler) acquire(ctx context.Context) (*endpoint, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, t.goneError()
	}
	if t.waiters.Len() == 0 {
		if ep := t.pickLocked(); ep != nil {
			t.mu.Unlock()
			return ep, nil
		}
	}
	if t.waiters.Len() >= t.maxWaiting {
		n := t.waiters.Len()
		t.mu.Unlock()
		return nil, throttleErrorf(ErrQueueFull, "activator: revision %s already has %d requests waiting for a replica", t.name, n)
	}
	poke := false
	if len(t.ready) == 0 {
		now := time.Now()
		if t.lastPoke.IsZero() || now.Sub(t.lastPoke) >= t.pokeEvery {
			t.lastPoke, poke = now, true
		}
	}
	w := &waiter{granted: make(chan struct{}, 1)}
	elem := t.waiters.PushBack(w)
	limit := t.wait
	t.mu.Unlock()
	if poke {
		t.poke()
	}
	return t.await(ctx, w, elem, limit)
}

// await blocks until w is handed an endpoint, ctx ends or limit passes.
func (t *throttler) await(ctx context.Context, w *waiter, elem *list.Element, limit time.Duration) (*endpoint, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	var err error
	select {
	case <-w.granted:
		return w.ep, w.err
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-timer.C:
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case w.ep != nil && err == nil: // handed an endpoint as the limit passed: take it
		return w.ep, nil
	case w.ep != nil: // handed an endpoint as the client left: pass it on
		t.releaseLocked(w.ep)
	case w.err != nil:
		return nil, w.err
	default:
		t.waiters.Remove(elem)
	}
	if err != nil {
		return nil, err
	}
	if len(t.ready) == 0 {
		return nil, throttleErrorf(ErrNoCapacity, "activator: revision %s has no ready replica after %s", t.name, limit)
	}
	if t.peers.alone() {
		return nil, throttleErrorf(ErrNoCapacity, "activator: revision %s has all %d ready replicas busy (containerConcurrency %d) after %s",
			t.name, len(t.ready), t.cc, limit)
	}
	return nil, throttleErrorf(ErrNoCapacity, "activator: revision %s has this activator's share busy (%d requests on %d of %d ready replicas, containerConcurrency %d, %d activators) after %s",
		t.name, t.limit, len(t.use), len(t.ready), t.cc, t.peers.count, limit)
}

// pickLocked takes a slot on the chosen endpoint, or returns nil.
func (t *throttler) pickLocked() *endpoint {
	if t.busy >= t.limit {
		return nil
	}
	i := choose(t.use, t.cc, t.cursor)
	if i < 0 {
		return nil
	}
	t.cursor = i + 1
	ep := t.use[i]
	ep.inflight++
	t.busy++
	return ep
}

// release gives back an endpoint acquire returned.
func (t *throttler) release(ep *endpoint) {
	t.mu.Lock()
	t.releaseLocked(ep)
	t.mu.Unlock()
}

func (t *throttler) releaseLocked(ep *endpoint) {
	ep.inflight--
	if !ep.gone {
		t.busy--
	}
	t.dispatchLocked()
}

// dispatchLocked hands free endpoints to waiters, oldest first.
func (t *throttler) dispatchLocked() {
	for t.waiters.Len() > 0 {
		ep := t.pickLocked()
		if ep == nil {
			return
		}
		w := t.waiters.Remove(t.waiters.Front()).(*waiter)
		w.ep = ep
		w.granted <- struct{}{}
	}
}

// rebalanceLocked recomputes the endpoints this activator uses and its
// limit, then hands out what they free. Requests holding an endpoint it
// no longer uses keep counting against the limit until they finish, and
// waiters keep their place.
func (t *throttler) rebalanceLocked() {
	if own := t.peers.subset(t.listed, t.cc); own == nil {
		t.use = t.ready
	} else {
		use := make([]*endpoint, 0, len(own))
		for _, ep := range t.ready {
			if _, ok := slices.BinarySearch(own, ep.addr); ok {
				use = append(use, ep)
			}
		}
		t.use = use
	}
	t.limit = t.peers.limit(t.cc, len(t.listed), len(t.use))
	t.dispatchLocked()
}

// configure sets containerConcurrency and the wait limit.
func (t *throttler) configure(cc int, wait time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cc, t.wait = cc, wait
	t.rebalanceLocked()
}

// list sets every address the source lists, ready or still probed, which
// the activators split among them.
func (t *throttler) list(addrs []string) {
	listed := slices.Compact(slices.Sorted(slices.Values(addrs)))
	t.mu.Lock()
	defer t.mu.Unlock()
	t.listed = listed
	t.rebalanceLocked()
}

// setPeers sets where this activator stands among the activators.
func (t *throttler) setPeers(p peers) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.peers = p
	t.rebalanceLocked()
}

// add makes addr a ready endpoint (it passed its probe).
func (t *throttler) add(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if slices.ContainsFunc(t.ready, func(ep *endpoint) bool { return ep.addr == addr }) {
		return
	}
	t.ready = append(t.ready, &endpoint{addr: addr})
	t.rebalanceLocked()
}

// remove takes addr out of the ready set; requests holding it finish.
func (t *throttler) remove(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ready = slices.DeleteFunc(t.ready, func(ep *endpoint) bool {
		if ep.addr != addr {
			return false
		}
		ep.gone = true
		t.busy -= ep.inflight
		return true
	})
	t.rebalanceLocked()
}

// close fails every waiter and every later acquire: the Revision is gone.
func (t *throttler) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	err := t.goneError()
	for t.waiters.Len() > 0 {
		w := t.waiters.Remove(t.waiters.Front()).(*waiter)
		w.err = err
		w.granted <- struct{}{}
	}
}

// pokeDue reports whether requests still wait with no ready endpoint,
// so the periodic report should poke again; a poke in the last half
// pokeEvery (a request's own) makes it wait for the next tick.
func (t *throttler) pokeDue(now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.waiters.Len() == 0 || len(t.ready) > 0 || now.Sub(t.lastPoke) < t.pokeEvery/2 {
		return false
	}
	t.lastPoke = now
	return true
}

// counts is what the throttler holds now, for metrics and tests.
func (t *throttler) counts() (waiting, inflight, ready int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waiters.Len(), t.busy, len(t.ready)
}

func (t *throttler) goneError() error {
	return throttleErrorf(ErrRevisionGone, "activator: revision %s was deleted", t.name)
}
