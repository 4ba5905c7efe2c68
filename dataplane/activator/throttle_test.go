package activator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func newTestThrottler(cc int, pokes *atomic.Int32) *throttler {
	thr := newThrottler("default/hello", 10, func() { pokes.Add(1) }, time.Hour)
	thr.configure(cc, waitLimit)
	return thr
}

type grant struct {
	i   int
	ep  *endpoint
	err error
}

// Waiters are served in arrival order as slots free up.
func TestThrottlerServesInArrivalOrder(t *testing.T) {
	var pokes atomic.Int32
	thr := newTestThrottler(1, &pokes)
	thr.add("a")
	held, err := thr.acquire(context.Background())
	if err != nil || held.addr != "a" {
		t.Fatalf("acquire = %v, %v; want a", held, err)
	}
	grants := make(chan grant, 3)
	for i := range 3 {
		go func() {
			ep, err := thr.acquire(context.Background())
			grants <- grant{i, ep, err}
		}()
		eventually(t, "the waiter to line up", func() bool { w, _, _ := thr.counts(); return w == i+1 })
	}
	for i := range 3 {
		thr.release(held)
		g := receive(t, grants, "a grant")
		if g.i != i || g.err != nil || g.ep.addr != "a" {
			t.Fatalf("grant %+v, want waiter %d given a", g, i)
		}
		held = g.ep
	}
	thr.release(held)
	if w, f, _ := thr.counts(); w != 0 || f != 0 {
		t.Fatalf("waiting %d, in flight %d; want 0, 0", w, f)
	}
	if n := pokes.Load(); n != 0 {
		t.Fatalf("poked %d times with a ready endpoint, want 0", n)
	}
}

// The first request to wait with no ready endpoint pokes at once; the
// next within pokeEvery does not.
func TestThrottlerPokesOnceForWaitersAtZero(t *testing.T) {
	var pokes atomic.Int32
	thr := newTestThrottler(1, &pokes)
	grants := make(chan grant, 2)
	for i := range 2 {
		go func() {
			ep, err := thr.acquire(context.Background())
			grants <- grant{i, ep, err}
		}()
		eventually(t, "the waiter to line up", func() bool { w, _, _ := thr.counts(); return w == i+1 })
		if n := pokes.Load(); n != 1 {
			t.Fatalf("after %d waiters: %d pokes, want 1", i+1, n)
		}
	}
	thr.close()
	for range 2 {
		if g := receive(t, grants, "a grant"); !errors.Is(g.err, ErrRevisionGone) {
			t.Fatalf("after close: %+v, want ErrRevisionGone", g)
		}
	}
}

// A removed endpoint's requests no longer count against capacity.
func TestThrottlerRemovedEndpointFreesCapacity(t *testing.T) {
	var pokes atomic.Int32
	thr := newTestThrottler(1, &pokes)
	thr.add("a")
	old, _ := thr.acquire(context.Background())
	thr.remove("a")
	thr.add("b")
	ep, err := thr.acquire(context.Background())
	if err != nil || ep.addr != "b" {
		t.Fatalf("acquire = %v, %v; want b at once", ep, err)
	}
	thr.release(old)
	if _, f, r := thr.counts(); f != 1 || r != 1 {
		t.Fatalf("in flight %d, ready %d; want 1 (on b), 1", f, r)
	}
	thr.release(ep)
}

// Raising containerConcurrency lets waiters onto the endpoints at once.
func TestThrottlerConfigureDispatches(t *testing.T) {
	var pokes atomic.Int32
	thr := newTestThrottler(1, &pokes)
	thr.add("a")
	held, _ := thr.acquire(context.Background())
	grants := make(chan grant, 1)
	go func() {
		ep, err := thr.acquire(context.Background())
		grants <- grant{0, ep, err}
	}()
	eventually(t, "the waiter to line up", func() bool { w, _, _ := thr.counts(); return w == 1 })
	thr.configure(2, waitLimit)
	if g := receive(t, grants, "a grant"); g.err != nil || g.ep != held {
		t.Fatalf("grant %+v, want the same endpoint's second slot", g)
	}
}

func TestThrottlerPokeDue(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		name     string
		waiting  int
		ready    bool
		closed   bool
		lastPoke time.Duration // before now
		want     bool
	}{
		{name: "nothing waits", lastPoke: time.Hour},
		{name: "waiting with a ready endpoint", waiting: 1, ready: true, lastPoke: time.Hour},
		{name: "waiting at zero", waiting: 1, lastPoke: time.Second, want: true},
		{name: "waiting at zero, just poked", waiting: 1, lastPoke: 400 * time.Millisecond},
		{name: "waiting at zero, poked half a round ago", waiting: 1, lastPoke: 500 * time.Millisecond, want: true},
		{name: "closed", waiting: 1, closed: true, lastPoke: time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			thr := newThrottler("default/hello", 10, func() {}, time.Second)
			for range tc.waiting {
				thr.waiters.PushBack(&waiter{granted: make(chan struct{}, 1)})
			}
			if tc.ready {
				thr.ready = []*endpoint{{addr: "a"}}
			}
			thr.closed = tc.closed
			thr.lastPoke = now.Add(-tc.lastPoke)
			if got := thr.pokeDue(now); got != tc.want {
				t.Fatalf("pokeDue = %v, want %v", got, tc.want)
			}
			if tc.want && !thr.lastPoke.Equal(now) {
				t.Fatalf("lastPoke = %v, want the poke recorded", thr.lastPoke)
			}
		})
	}
}

// newSharedThrottler is a throttler with containerConcurrency cc over
// the ready endpoints addrs, placed at p among the activators.
func newSharedThrottler(cc int, p peers, addrs ...string) *throttler {
	thr := newThrottler("default/hello", 10, func() {}, time.Hour)
	thr.configure(cc, waitLimit)
	thr.setPeers(p)
	thr.list(addrs)
	for _, addr := range addrs {
		thr.add(addr)
	}
	return thr
}

// acquireNow takes an endpoint the throttler has free at once.
func acquireNow(t *testing.T, thr *throttler) *endpoint {
	t.Helper()
	if w, _, _ := thr.counts(); w != 0 {
		t.Fatalf("%d requests wait already", w)
	}
	ep, err := thr.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// acquireAsync lines a request up; its grant arrives on grants.
func acquireAsync(t *testing.T, thr *throttler, i int, grants chan<- grant) {
	t.Helper()
	want, _, _ := thr.counts()
	go func() {
		ep, err := thr.acquire(context.Background())
		grants <- grant{i, ep, err}
	}()
	eventually(t, "the waiter to line up", func() bool { w, _, _ := thr.counts(); return w == want+1 })
}

// Each of two activators over three replicas sends only to its own:
// replicas 0 and 2 of the sorted list, or replica 1.
func TestThrottlerUsesItsShare(t *testing.T) {
	for _, tc := range []struct {
		index int
		want  []string
	}{
		{index: 0, want: []string{"a", "c"}},
		{index: 1, want: []string{"b"}},
	} {
		t.Run(fmt.Sprint(tc.index), func(t *testing.T) {
			thr := newSharedThrottler(1, peers{index: tc.index, count: 2}, "c", "b", "a")
			var got []string
			for range tc.want {
				got = append(got, acquireNow(t, thr).addr)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("endpoints granted (-want +got):\n%s", diff)
			}
			grants := make(chan grant, 1)
			acquireAsync(t, thr, 0, grants)
			if w, f, r := thr.counts(); w != 1 || f != len(tc.want) || r != 3 {
				t.Fatalf("waiting %d, in flight %d, ready %d; want 1, %d, 3", w, f, len(tc.want), r)
			}
			thr.close()
			receive(t, grants, "the waiter to fail")
		})
	}
}

// When the other activator leaves, waiters are served at once from the
// replicas it used, in arrival order.
func TestThrottlerRebalanceKeepsWaiters(t *testing.T) {
	thr := newSharedThrottler(1, peers{index: 1, count: 2}, "a", "b", "c")
	held := acquireNow(t, thr)
	grants := make(chan grant, 2)
	for i := range 2 {
		acquireAsync(t, thr, i, grants)
	}
	thr.setPeers(peers{index: 0, count: 1})
	got := make([]string, 2)
	for range 2 {
		g := receive(t, grants, "a grant")
		if g.err != nil {
			t.Fatalf("waiter %d: %v", g.i, g.err)
		}
		got[g.i] = g.ep.addr
	}
	if diff := cmp.Diff([]string{"a", "c"}, got); diff != "" {
		t.Fatalf("endpoints granted to the waiters in arrival order (-want +got):\n%s", diff)
	}
	if held.addr != "b" {
		t.Fatalf("first request went to %s, want b", held.addr)
	}
	if w, f, _ := thr.counts(); w != 0 || f != 3 {
		t.Fatalf("waiting %d, in flight %d; want 0, 3", w, f)
	}
}

// After a rebalance, requests still on replicas this activator no longer
// uses count against its share until they finish: it never sends more
// than its share, even to a free replica.
func TestThrottlerRebalanceCountsRequestsInFlight(t *testing.T) {
	thr := newSharedThrottler(1, peers{index: 0, count: 2}, "a", "b", "c")
	a, c := acquireNow(t, thr), acquireNow(t, thr)
	thr.setPeers(peers{index: 1, count: 2}) // now b only: a share of 1
	grants := make(chan grant, 1)
	acquireAsync(t, thr, 0, grants)
	thr.release(a)
	if w, f, _ := thr.counts(); w != 1 || f != 1 {
		t.Fatalf("with c still held: waiting %d, in flight %d; want 1, 1", w, f)
	}
	thr.release(c)
	if g := receive(t, grants, "a grant"); g.err != nil || g.ep.addr != "b" {
		t.Fatalf("grant %+v, want b", g)
	}
}

// Replicas scaling up under a fixed activator set rebalance too: a new
// replica that is this activator's serves its waiter.
func TestThrottlerNewReplicaRebalances(t *testing.T) {
	thr := newSharedThrottler(1, peers{index: 1, count: 2}, "a", "b")
	held := acquireNow(t, thr)
	grants := make(chan grant, 1)
	acquireAsync(t, thr, 0, grants)
	thr.list([]string{"a", "b", "c", "d"}) // b and d are ours
	thr.add("c")
	if w, _, _ := thr.counts(); w != 1 {
		t.Fatalf("after the other activator's replica: %d waiting, want 1", w)
	}
	thr.add("d")
	if g := receive(t, grants, "a grant"); g.err != nil || g.ep.addr != "d" {
		t.Fatalf("grant %+v, want d", g)
	}
	thr.release(held)
}

// A request that waited its limit for its activator's share says so.
func TestThrottlerShareBusyError(t *testing.T) {
	thr := newSharedThrottler(1, peers{index: 1, count: 2}, "a", "b", "c")
	thr.configure(1, time.Millisecond)
	held := acquireNow(t, thr)
	defer thr.release(held)
	_, err := thr.acquire(context.Background())
	want := "activator: revision default/hello has this activator's share busy (1 requests on 1 of 3 ready replicas, containerConcurrency 1, 2 activators) after 1ms"
	if !errors.Is(err, ErrNoCapacity) || err.Error() != want {
		t.Fatalf("acquire = %v, want ErrNoCapacity %q", err, want)
	}
}
