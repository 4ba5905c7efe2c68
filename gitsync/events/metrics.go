package events

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons an event was dropped, the reason label of knit_events_dropped_total.
const (
	dropOverflow = "overflow" // the sink's queue was full
	dropRejected = "rejected" // the sink answered a 4xx other than 408/429
	dropDenied   = "denied"   // the egress policy refused the sink's address
	dropRemoved  = "removed"  // the sink was removed with events queued
	dropShutdown = "shutdown" // Close's deadline passed with events queued and no Store to keep them
	// dropUnreadable: a Store gave back an event that does not decode.
	dropUnreadable = "unreadable"
)

// metrics are the dispatcher's Prometheus series, labelled by sink.
type metrics struct {
	delivered *prometheus.CounterVec
	failed    *prometheus.CounterVec
	dropped   *prometheus.CounterVec
	depth     *prometheus.GaugeVec
	latency   *prometheus.HistogramVec
}

// latencyBuckets run from a local sink's answer to a sink down for minutes.
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "knit_events_delivered_total",
			Help: "CloudEvents a sink accepted with a 2xx answer.",
		}, []string{"sink"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "knit_events_failed_attempts_total",
			Help: "Delivery attempts that failed (network error or non-2xx answer), retried or not.",
		}, []string{"sink"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "knit_events_dropped_total",
			Help: "CloudEvents given up on: queue overflow, rejected by the sink (4xx), refused by the egress policy, sink removed, shutdown deadline without a store, or unreadable in the store.",
		}, []string{"sink", "reason"}),
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "knit_events_queue_depth",
			Help: "CloudEvents waiting for delivery to a sink, the one in flight excluded.",
		}, []string{"sink"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "knit_events_delivery_latency_seconds",
			Help:    "Time from Send to the sink's 2xx answer, queueing and retries included.",
			Buckets: latencyBuckets,
		}, []string{"sink"}),
	}
	var err error
	m.delivered, err = register(reg, m.delivered)
	if err == nil {
		m.failed, err = register(reg, m.failed)
	}
	if err == nil {
		m.dropped, err = register(reg, m.dropped)
	}
	if err == nil {
		m.depth, err = register(reg, m.depth)
	}
	if err == nil {
		m.latency, err = register(reg, m.latency)
	}
	if err != nil {
		return nil, fmt.Errorf("registering event metrics: %w", err)
	}
	return m, nil
}

// register registers c, or returns the identical collector already
// registered, so two dispatchers can share a registry.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// forget deletes a removed sink's series.
func (m *metrics) forget(sink string) {
	l := prometheus.Labels{"sink": sink}
	m.delivered.DeletePartialMatch(l)
	m.failed.DeletePartialMatch(l)
	m.dropped.DeletePartialMatch(l)
	m.depth.DeletePartialMatch(l)
	m.latency.DeletePartialMatch(l)
}
