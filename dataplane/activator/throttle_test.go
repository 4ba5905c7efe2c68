package activator

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
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
