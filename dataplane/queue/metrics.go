package queue

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metric names on the metrics port's /metrics.
const (
	metricRequests = "knit_queue_requests_total"
	metricLatency  = "knit_queue_request_duration_seconds"
	metricInflight = "knit_queue_inflight_requests"
	metricDepth    = "knit_queue_depth"
	metricReady    = "knit_queue_user_container_ready"
)

var codeClasses = [6]string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"}

// latencyBuckets span a fast in-memory answer to Knative's longest timeout.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 600}

// requestMetrics are the queue's Prometheus metrics. Counters per status
// class are resolved once, so a request costs two atomic adds and a
// histogram observation; gauges are read from the tracker and breaker
// when scraped.
type requestMetrics struct {
	byClass [6]prometheus.Counter
	latency prometheus.Histogram
}

// newRequestMetrics registers the queue's metrics on reg. inflight,
// queued and ready are read at scrape time; queued may be nil.
func newRequestMetrics(reg prometheus.Registerer, labels prometheus.Labels, inflight, queued func() int64, ready func() bool) (*requestMetrics, error) {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        metricRequests,
		Help:        "Requests served through the queue-proxy (probes excluded), by response status class.",
		ConstLabels: labels,
	}, []string{"code_class"})
	m := &requestMetrics{
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        metricLatency,
			Help:        "Time from a request's arrival at the queue-proxy to the end of its response, queueing included.",
			ConstLabels: labels,
			Buckets:     latencyBuckets,
		}),
	}
	for i, class := range codeClasses {
		m.byClass[i] = requests.WithLabelValues(class)
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, f)
	}
	if queued == nil {
		queued = func() int64 { return 0 }
	}
	cs := []prometheus.Collector{
		requests, m.latency,
		gauge(metricInflight, "Requests inside the queue-proxy now, queued ones included.", func() float64 { return float64(inflight()) }),
		gauge(metricDepth, "Requests waiting for a containerConcurrency slot now.", func() float64 { return float64(queued()) }),
		gauge(metricReady, "1 when the user container passes its readiness probe.", func() float64 {
			if ready() {
				return 1
			}
			return 0
		}),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *requestMetrics) observe(status int, d time.Duration) {
	class := status / 100
	if class < 1 || class > 5 {
		class = 0
	}
	m.byClass[class].Inc()
	m.latency.Observe(d.Seconds())
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
