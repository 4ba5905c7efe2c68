package canary

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The queue-proxy's metrics the analysis reads (dataplane/queue/metrics.go).
const (
	metricRequests = "knit_queue_requests_total"
	metricLatency  = "knit_queue_request_duration_seconds"
	labelCodeClass = "code_class"
)

// Snapshot is what the analysis needs of one or more queue-proxies'
// metrics at one moment, or, after Delta, over a window: requests served,
// how many answered 5xx, and the latency histogram.
type Snapshot struct {
	Requests  float64
	Errors5xx float64
	// Buckets are the latency histogram's cumulative counts by upper
	// bound in seconds, ascending, the last one +Inf (the total). Empty
	// means no histogram, as in the zero Snapshot.
	Buckets []Bucket
}

// Bucket is one cumulative histogram bucket: Count observations took at
// most UpperBound seconds.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// ParseMetrics reads a /metrics body in Prometheus' text format, as a
// queue-proxy's metrics port serves it, into a Snapshot. It adds up every
// series of knit_queue_requests_total and
// knit_queue_request_duration_seconds whatever their labels (a
// queue-proxy's body holds one revision's replica; pick the bodies, not
// the labels) and ignores every other family. A body without those two
// families is an error: it is not a queue-proxy's, and reading it as no
// traffic would pass a canary that was never measured.
func ParseMetrics(r io.Reader) (Snapshot, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return Snapshot{}, fmt.Errorf("parsing metrics: %w", err)
	}
	requests, latency := families[metricRequests], families[metricLatency]
	switch {
	case requests == nil || latency == nil:
		return Snapshot{}, fmt.Errorf("no %s or %s: not a knit queue-proxy's metrics", metricRequests, metricLatency)
	case requests.GetType() != dto.MetricType_COUNTER:
		return Snapshot{}, fmt.Errorf("%s is a %s, want a counter", metricRequests, requests.GetType())
	case latency.GetType() != dto.MetricType_HISTOGRAM:
		return Snapshot{}, fmt.Errorf("%s is a %s, want a histogram", metricLatency, latency.GetType())
	}
	var s Snapshot
	for _, m := range requests.GetMetric() {
		v := m.GetCounter().GetValue()
		if !countable(v) {
			return Snapshot{}, fmt.Errorf("%s is %v: not a knit queue-proxy's metrics", metricRequests, v)
		}
		s.Requests += v
		for _, l := range m.GetLabel() {
			if l.GetName() == labelCodeClass && l.GetValue() == "5xx" {
				s.Errors5xx += v
			}
		}
	}
	hists := make([]Snapshot, 0, len(latency.GetMetric()))
	for _, m := range latency.GetMetric() {
		h := Snapshot{Buckets: histogramBuckets(m.GetHistogram())}
		if err := h.check(); err != nil { // each series, before a sum hides it
			return Snapshot{}, fmt.Errorf("%w: not a knit queue-proxy's metrics", err)
		}
		hists = append(hists, h)
	}
	s.Buckets = Sum(hists...).Buckets
	if err := s.check(); err != nil {
		return Snapshot{}, fmt.Errorf("%w: not a knit queue-proxy's metrics", err)
	}
	return s, nil
}

// check refuses what no queue-proxy counts: a negative, NaN or infinite
// counter, a histogram whose cumulative counts go down or whose bounds are
// not numbers. The text format carries any float, and a canary judged on
// such numbers would pass or wait for the wrong reason.
func (s Snapshot) check() error {
	for _, c := range []struct {
		name string
		v    float64
	}{{metricRequests, s.Requests}, {metricRequests + `{code_class="5xx"}`, s.Errors5xx}} {
		if !countable(c.v) {
			return fmt.Errorf("%s adds up to %v", c.name, c.v)
		}
	}
	for i, b := range s.Buckets {
		switch {
		case math.IsNaN(b.UpperBound):
			return fmt.Errorf("%s has a bucket with le=NaN", metricLatency)
		case !countable(b.Count):
			return fmt.Errorf("%s bucket le=%v counts %v", metricLatency, b.UpperBound, b.Count)
		case i > 0 && b.Count < s.Buckets[i-1].Count:
			return fmt.Errorf("%s bucket le=%v counts %v, fewer than le=%v's %v: buckets are cumulative",
				metricLatency, b.UpperBound, b.Count, s.Buckets[i-1].UpperBound, s.Buckets[i-1].Count)
		}
	}
	return nil
}

// countable is what a counter may be: finite and never negative.
func countable(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// histogramBuckets converts a parsed histogram, adding the +Inf bucket
// from the sample count when the text left it out.
func histogramBuckets(h *dto.Histogram) []Bucket {
	count := func(integer uint64, float float64) float64 {
		if float != 0 {
			return float
		}
		return float64(integer)
	}
	var bs []Bucket
	for _, b := range h.GetBucket() {
		bs = append(bs, Bucket{UpperBound: b.GetUpperBound(), Count: count(b.GetCumulativeCount(), b.GetCumulativeCountFloat())})
	}
	slices.SortFunc(bs, func(a, b Bucket) int { return cmpFloat(a.UpperBound, b.UpperBound) })
	if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		bs = append(bs, Bucket{UpperBound: math.Inf(1), Count: count(h.GetSampleCount(), h.GetSampleCountFloat())})
	}
	return bs
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Sum adds snapshots of several replicas. Histograms are added on the
// bucket bounds they all have (every one has +Inf), which is exact for
// cumulative buckets: replicas of different knit versions with different
// buckets still sum, only more coarsely. Snapshots without buckets add
// their counts and leave the histogram alone; Sum() is the zero Snapshot.
func Sum(snaps ...Snapshot) Snapshot {
	var out Snapshot
	var bounds []float64 // nil until a snapshot with buckets is seen
	for _, s := range snaps {
		out.Requests += s.Requests
		out.Errors5xx += s.Errors5xx
		if len(s.Buckets) == 0 {
			continue
		}
		if bounds == nil {
			for _, b := range s.Buckets {
				bounds = append(bounds, b.UpperBound)
			}
			continue
		}
		bounds = slices.DeleteFunc(bounds, func(ub float64) bool { _, ok := countAt(s.Buckets, ub); return !ok })
	}
	for _, ub := range bounds {
		var total float64
		for _, s := range snaps {
			c, _ := countAt(s.Buckets, ub)
			total += c
		}
		out.Buckets = append(out.Buckets, Bucket{UpperBound: ub, Count: total})
	}
	return out
}

// countAt is the cumulative count at upper bound ub, if bs has that bound.
func countAt(bs []Bucket, ub float64) (float64, bool) {
	i, ok := slices.BinarySearchFunc(bs, ub, func(b Bucket, ub float64) int { return cmpFloat(b.UpperBound, ub) })
	if !ok {
		return 0, false
	}
	return bs[i].Count, true
}

// Delta is what one replica served between two snapshots of it: after
// minus before. A counter that went down means the replica restarted (its
// queue-proxy's counters start again at zero), so the whole of after is
// what it served since, as Prometheus' rate() counts a reset: requests
// served between before and the restart are lost, never negative. The
// same holds when the histogram's buckets changed (a new queue-proxy
// version). Take deltas per replica, then Sum them: a restart hides in a
// sum whose other replicas grew more (see DeltaReplicas).
func Delta(before, after Snapshot) Snapshot {
	if reset(before, after) {
		return after
	}
	d := Snapshot{Requests: after.Requests - before.Requests, Errors5xx: after.Errors5xx - before.Errors5xx}
	for i, b := range after.Buckets {
		c := b.Count
		if len(before.Buckets) > 0 {
			c -= before.Buckets[i].Count
		}
		d.Buckets = append(d.Buckets, Bucket{UpperBound: b.UpperBound, Count: c})
	}
	return d
}

func reset(before, after Snapshot) bool {
	if after.Requests < before.Requests || after.Errors5xx < before.Errors5xx {
		return true
	}
	if len(before.Buckets) == 0 {
		return false
	}
	if len(before.Buckets) != len(after.Buckets) {
		return true
	}
	for i, b := range before.Buckets {
		if a := after.Buckets[i]; a.UpperBound != b.UpperBound || a.Count < b.Count {
			return true
		}
	}
	return false
}

// DeltaReplicas is the window's Snapshot of a set of replicas keyed by
// their metrics URL (as ScrapeReplicas returns them): each replica's Delta,
// summed. A replica only in after started during the window and counts
// from zero; one only in before was gone by the end, and what it served
// since before is lost with it.
func DeltaReplicas(before, after map[string]Snapshot) Snapshot {
	deltas := make([]Snapshot, 0, len(after))
	for _, url := range slices.Sorted(maps.Keys(after)) {
		deltas = append(deltas, Delta(before[url], after[url]))
	}
	return Sum(deltas...)
}
