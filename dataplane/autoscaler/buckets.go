package autoscaler

import (
	"math"
	"time"
)

// bucketSize is the granularity of the metric windows: Knative scrapes and
// buckets once a second.
const bucketSize = time.Second

// buckets is a ring of per-second sums covering one window. Values recorded
// in the same second add up, because the queue-proxies' and the activator's
// reports of one second together make the revision's total.
type buckets struct {
	values []float64
	window time.Duration
	// first is the second of the first write since the ring was last empty
	// for a whole window; last is the second of the latest write. Averages
	// only count seconds in [first, last], so a fresh revision is not diluted
	// by seconds it did not exist.
	first, last time.Time
}

func newBuckets(window time.Duration) *buckets {
	n := int(math.Ceil(float64(window) / float64(bucketSize)))
	return &buckets{values: make([]float64, n), window: window}
}

func (b *buckets) slot(second int64) *float64 {
	n := int64(len(b.values))
	return &b.values[(second%n+n)%n]
}

// record adds v to the bucket of now. A second with no record in between is
// a zero; a whole window without records starts over; a record older than
// the window is dropped.
func (b *buckets) record(now time.Time, v float64) {
	t := now.Truncate(bucketSize)
	switch {
	case b.last.IsZero() || t.Sub(b.last) >= b.window:
		clear(b.values)
		b.first, b.last = t, t
	case t.After(b.last):
		for s := b.last.Unix() + 1; s <= t.Unix(); s++ {
			*b.slot(s) = 0
		}
		b.last = t
	case !t.Add(b.window).After(b.last):
		return
	case t.Before(b.first):
		b.first = t
	}
	*b.slot(t.Unix()) += v
}

// empty reports whether nothing was recorded within the window before now;
// the decider has no data to decide on then.
func (b *buckets) empty(now time.Time) bool {
	return b.last.IsZero() || now.Truncate(bucketSize).Sub(b.last) > b.window
}

// resize keeps the most recent seconds that still fit in the new window.
func (b *buckets) resize(window time.Duration) {
	if window == b.window {
		return
	}
	nb := newBuckets(window)
	if !b.last.IsZero() {
		keep := int64(min(len(b.values), len(nb.values)))
		for s := b.last.Unix() - keep + 1; s <= b.last.Unix(); s++ {
			*nb.slot(s) = *b.slot(s)
		}
		// Only the kept seconds count from now on.
		nb.first = b.first
		if kept := b.last.Add(-time.Duration(keep-1) * bucketSize); kept.After(nb.first) {
			nb.first = kept
		}
		nb.last = b.last
	}
	*b = *nb
}
