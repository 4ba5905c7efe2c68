package autoscaler

import "time"

// Metrics keeps a revision's observed concurrency and requests per second in
// one-second buckets and averages them over the stable and the panic window,
// the two views the Decider compares. Current Knative averages both windows
// plainly (AggregationLinear) unless a revision opts into the weighted
// exponential average with the metric-aggregation-algorithm annotation; knit
// does the same.
type Metrics struct {
	aggregation       Aggregation
	stableConcurrency *buckets
	panicConcurrency  *buckets
	stableRPS         *buckets
	panicRPS          *buckets
}

// NewMetrics makes empty windows; stable and panic are the two window lengths.
func NewMetrics(stable, panic time.Duration, aggregation Aggregation) *Metrics {
	return &Metrics{
		aggregation:       aggregation,
		stableConcurrency: newBuckets(stable),
		panicConcurrency:  newBuckets(panic),
		stableRPS:         newBuckets(stable),
		panicRPS:          newBuckets(panic),
	}
}

// Record adds the revision's total observed in-flight requests and requests
// per second at now. Several records in one second add up, so each source
// (every queue-proxy, the activator) records its own share.
func (m *Metrics) Record(now time.Time, concurrency, rps float64) {
	m.stableConcurrency.record(now, concurrency)
	m.panicConcurrency.record(now, concurrency)
	m.stableRPS.record(now, rps)
	m.panicRPS.record(now, rps)
}

// Averages returns the stable- and panic-window averages of metric at now.
// ok is false when nothing was recorded for a whole stable window: the
// decider must not act on no data (Knative's ErrNoData).
func (m *Metrics) Averages(metric Metric, now time.Time) (stable, panic float64, ok bool) {
	s, p := m.stableConcurrency, m.panicConcurrency
	if metric == MetricRPS {
		s, p = m.stableRPS, m.panicRPS
	}
	if s.empty(now) {
		return 0, 0, false
	}
	if m.aggregation == AggregationWeightedExponential {
		return s.weightedAverage(now), p.weightedAverage(now), true
	}
	return s.average(now), p.average(now), true
}

// Resize changes the windows when a revision's spec changes, keeping the
// seconds that still fit so a config change does not forget the load.
func (m *Metrics) Resize(stable, panic time.Duration, aggregation Aggregation) {
	m.aggregation = aggregation
	m.stableConcurrency.resize(stable)
	m.panicConcurrency.resize(panic)
	m.stableRPS.resize(stable)
	m.panicRPS.resize(panic)
}
