package queue

import (
	"sync/atomic"
	"time"
)

// inflightBits of a packed counter hold the requests in flight; the other
// 44 bits hold the running time integral of concurrency, in microseconds,
// modulo 2^44. One atomic add per request start or end keeps both exact
// and consistent with each other.
const (
	inflightBits = 20
	inflightMask = 1<<inflightBits - 1
	areaBits     = 64 - inflightBits
)

// concurrencyCounter measures time-weighted concurrency without locks. A
// request arriving at t (µs since base) adds 1 in flight and −t to the
// area; leaving at t' it adds −1 and +t'. The area at time T is then
// stored + inflight×T: the sum of finished requests' durations plus the
// running ones' time so far. Callers difference two readings; the
// difference is exact while it stays below 2^43 µs (≈ 100 days at
// concurrency 1), which the reporter's periodic sampling guarantees.
type concurrencyCounter struct {
	state    atomic.Int64
	requests atomic.Uint64
}

func micros(base, now time.Time) int64 { return int64(now.Sub(base) / time.Microsecond) }

func (c *concurrencyCounter) in(t int64) {
	c.state.Add(1 - t<<inflightBits)
	c.requests.Add(1)
}

func (c *concurrencyCounter) out(t int64) {
	c.state.Add(t<<inflightBits - 1)
}

// inflight is the number of requests in flight now.
func (c *concurrencyCounter) inflight() int64 { return c.state.Load() & inflightMask }

// area is the concurrency integral up to t, modulo 2^44.
func (c *concurrencyCounter) area(t int64) int64 {
	s := c.state.Load()
	return s>>inflightBits + (s&inflightMask)*t
}

// areaDelta is later−earlier for two area readings, undoing the wrap.
func areaDelta(later, earlier int64) int64 {
	d := (later - earlier) << inflightBits >> inflightBits
	return max(d, 0)
}

// requestTracker counts every request and, apart, those the activator
// proxied, as Knative's queue-proxy does for the autoscaler.
type requestTracker struct {
	base         time.Time
	all, proxied concurrencyCounter
}

func newRequestTracker(base time.Time) *requestTracker { return &requestTracker{base: base} }

func (t *requestTracker) in(now time.Time, proxied bool) {
	us := micros(t.base, now)
	t.all.in(us)
	if proxied {
		t.proxied.in(us)
	}
}

func (t *requestTracker) out(now time.Time, proxied bool) {
	us := micros(t.base, now)
	t.all.out(us)
	if proxied {
		t.proxied.out(us)
	}
}

// Inflight is the number of requests inside the queue-proxy now, queued
// ones included.
func (t *requestTracker) Inflight() int64 { return t.all.inflight() }
