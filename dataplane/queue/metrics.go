package queue

import (
	"math"
	"net/http"
	"sort"
	"strconv"
	"sync/atomic"
	"time"
)

// Metric names on the metrics port's /metrics.
const (
	metricRequests = "knit_queue_requests_total"
	metricLatency  = "knit_queue_request_duration_seconds"
	metricInflight = "knit_queue_inflight_requests"
	metricDepth    = "knit_queue_depth"
	metricReady    = "knit_queue_user_container_ready"
)

// codeClasses are the code_class values, index status/100 (0 for
// anything outside 100-599).
var codeClasses = [6]string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"}

// latencyBuckets span a fast in-memory answer to Knative's longest timeout.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 600}

// requestMetrics are the queue's Prometheus metrics. A request costs an
// atomic add to its class's counter and two to the histogram (its bucket
// and its sum); gauges are read from the tracker and breaker when
// scraped.
type requestMetrics struct {
	byClass [6]atomic.Uint64
	latency histogram
}

// newRequestMetrics registers the queue's metrics on reg with labels as
// constant labels (empty ones left out). inflight, queued and ready are
// read at scrape time; queued may be nil.
func newRequestMetrics(reg *metricsRegistry, labels map[string]string, inflight, queued func() int64, ready func() bool) *requestMetrics {
	m := &requestMetrics{latency: histogram{bounds: latencyBuckets, counts: make([]atomic.Uint64, len(latencyBuckets)+1)}}
	constLabels := labelPairs(labels)
	if queued == nil {
		queued = func() int64 { return 0 }
	}
	gauge := func(name, help string, f func() float64) metricFamily {
		return metricFamily{name: name, help: help, kind: "gauge", write: func(w *expoWriter) {
			w.sample(name, constLabels, "", "", f())
		}}
	}
	reg.add(
		metricFamily{
			name: metricRequests, kind: "counter",
			help: "Requests served through the queue-proxy (probes excluded), by response status class.",
			write: func(w *expoWriter) {
				// In label order, as client_golang sorts a family's series.
				for _, i := range []int{1, 2, 3, 4, 5, 0} {
					w.sample(metricRequests, joinLabels(`code_class="`+codeClasses[i]+`"`, constLabels), "", "", float64(m.byClass[i].Load()))
				}
			},
		},
		metricFamily{
			name: metricLatency, kind: "histogram",
			help:  "Time from a request's arrival at the queue-proxy to the end of its response, queueing included.",
			write: func(w *expoWriter) { m.latency.write(w, metricLatency, constLabels) },
		},
		gauge(metricInflight, "Requests inside the queue-proxy now, queued ones included.", func() float64 { return float64(inflight()) }),
		gauge(metricDepth, "Requests waiting for a containerConcurrency slot now.", func() float64 { return float64(queued()) }),
		gauge(metricReady, "1 when the user container passes its readiness probe.", func() float64 {
			if ready() {
				return 1
			}
			return 0
		}),
	)
	return m
}

func (m *requestMetrics) observe(status int, d time.Duration) {
	class := status / 100
	if class < 1 || class > 5 {
		class = 0
	}
	m.byClass[class].Add(1)
	m.latency.observe(d.Seconds())
}

// histogram is a Prometheus histogram of fixed buckets: a counter per
// bucket (the last one past every bound) and the sum of observations.
type histogram struct {
	bounds  []float64
	counts  []atomic.Uint64
	sumBits atomic.Uint64 // float64
}

func (h *histogram) observe(v float64) {
	h.counts[sort.SearchFloat64s(h.bounds, v)].Add(1)
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// write writes the cumulative buckets, sum and count; the count is the
// buckets' total, so the two always agree in one scrape.
func (h *histogram) write(w *expoWriter, name, labels string) {
	var total uint64
	for i, le := range h.bounds {
		total += h.counts[i].Load()
		w.sample(name+"_bucket", labels, "le", strconv.FormatFloat(le, 'g', -1, 64), float64(total))
	}
	total += h.counts[len(h.bounds)].Load()
	w.sample(name+"_bucket", labels, "le", "+Inf", float64(total))
	w.sample(name+"_sum", labels, "", "", math.Float64frombits(h.sumBits.Load()))
	w.sample(name+"_count", labels, "", "", float64(total))
}

// metricsHandler counts each request by status class and times it.
type metricsHandler struct {
	next    http.Handler
	metrics *requestMetrics
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rw, owned := wrapWriter(w)
	defer func() {
		status := rw.Status()
		if status == 0 {
			status = http.StatusOK // what net/http sends for an empty answer
		}
		h.metrics.observe(status, time.Since(start))
		if owned {
			releaseWriter(rw)
		}
	}()
	h.next.ServeHTTP(rw, r)
}
