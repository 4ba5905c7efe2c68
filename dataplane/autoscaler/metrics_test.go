package autoscaler

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// at is second s of the tests' clock.
func at(s int) time.Time { return simulationStart.Add(time.Duration(s) * time.Second) }

type averages struct {
	Stable, Panic float64
	OK            bool
}

func observe(m *Metrics, metric Metric, s int) averages {
	st, p, ok := m.Averages(metric, at(s))
	return averages{st, p, ok}
}

func TestMetricsLinear(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records map[int][2]float64 // second → concurrency, rps
		now     int
		metric  Metric
		want    averages
	}{
		{name: "no data", now: 0, want: averages{}},
		{name: "one second is the whole partial window", records: map[int][2]float64{0: {10, 4}}, now: 0, want: averages{10, 10, true}},
		{name: "rps", records: map[int][2]float64{0: {10, 4}}, now: 0, metric: MetricRPS, want: averages{4, 4, true}},
		{name: "partial window averages only seconds since the first", records: map[int][2]float64{0: {10}, 1: {20}, 2: {30}}, now: 2, want: averages{20, 20, true}},
		{name: "panic window is the last 6 seconds",
			records: map[int][2]float64{0: {60}, 1: {0}, 2: {0}, 3: {0}, 4: {0}, 5: {0}, 6: {0}, 7: {0}, 8: {0}, 9: {60}},
			now:     9, want: averages{12, 10, true}},
		{name: "seconds in one bucket add up", records: map[int][2]float64{0: {3}}, now: 0, want: averages{3, 3, true}},
		{name: "missing seconds in between are zeros", records: map[int][2]float64{0: {30}, 2: {30}}, now: 2, want: averages{20, 20, true}},
		{name: "seconds after the last write are not counted", records: map[int][2]float64{0: {10}, 1: {10}, 2: {10}}, now: 5, want: averages{10, 10, true}},
		{name: "old seconds leave the panic window", records: map[int][2]float64{0: {12}, 1: {12}}, now: 7, want: averages{12, 0, true}},
		{name: "a full stable window of nothing is no data", records: map[int][2]float64{0: {10}}, now: 61, want: averages{}},
		{name: "exactly a window after is zero but still data", records: map[int][2]float64{0: {10}}, now: 60, want: averages{0, 0, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMetrics(time.Minute, 6*time.Second, AggregationLinear)
			for s := 0; s <= tc.now; s++ {
				if r, ok := tc.records[s]; ok {
					m.Record(at(s), r[0], r[1])
				}
			}
			if tc.name == "seconds in one bucket add up" {
				m.Record(at(0).Add(500*time.Millisecond), 0, 0)
			}
			metric := tc.metric
			if metric == "" {
				metric = MetricConcurrency
			}
			if diff := cmp.Diff(tc.want, observe(m, metric, tc.now)); diff != "" {
				t.Errorf("averages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMetricsFullWindowAndRestart(t *testing.T) {
	m := NewMetrics(10*time.Second, 2*time.Second, AggregationLinear)
	for s := 0; s < 30; s++ {
		m.Record(at(s), float64(s), 0)
	}
	// Seconds 20..29 average 24.5; the panic window holds 28 and 29.
	if diff := cmp.Diff(averages{24.5, 28.5, true}, observe(m, MetricConcurrency, 29)); diff != "" {
		t.Errorf("full window (-want +got):\n%s", diff)
	}
	// A late record inside the window counts, one older than it is dropped.
	m.Record(at(25), 10, 0)
	m.Record(at(19), 1000, 0)
	if diff := cmp.Diff(averages{25.5, 28.5, true}, observe(m, MetricConcurrency, 29)); diff != "" {
		t.Errorf("late records (-want +got):\n%s", diff)
	}
	// After a whole window without data the average starts over.
	m.Record(at(45), 8, 0)
	if diff := cmp.Diff(averages{8, 8, true}, observe(m, MetricConcurrency, 45)); diff != "" {
		t.Errorf("restart (-want +got):\n%s", diff)
	}
}

func TestMetricsWeighted(t *testing.T) {
	m := NewMetrics(time.Minute, 6*time.Second, AggregationWeightedExponential)
	m.Record(at(0), 10, 0)
	// Stable: 60 buckets give the minimum coefficient 0.2; panic: 6 buckets
	// give 1-(0.0001)^(1/6).
	panicCoeff := 1 - math.Pow(0.0001, 1.0/6)
	want := averages{2, 10 * panicCoeff, true}
	if diff := cmp.Diff(want, observe(m, MetricConcurrency, 0)); diff != "" {
		t.Errorf("first second (-want +got):\n%s", diff)
	}
	// A gap of one second since the last write weighs it one step less.
	want = averages{10 * 0.2 * 0.8, 10 * panicCoeff * (1 - panicCoeff), true}
	if diff := cmp.Diff(want, observe(m, MetricConcurrency, 1), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("after a gap (-want +got):\n%s", diff)
	}
	for s := 1; s < 60; s++ {
		m.Record(at(s), 10, 0)
	}
	// A steady load gives the load times the sum of the weights.
	want = averages{10 * (1 - math.Pow(0.8, 60)), 10 * (1 - math.Pow(1-panicCoeff, 6)), true}
	if diff := cmp.Diff(want, observe(m, MetricConcurrency, 59), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("steady load (-want +got):\n%s", diff)
	}
}

func TestMetricsResize(t *testing.T) {
	m := NewMetrics(10*time.Second, 2*time.Second, AggregationLinear)
	for s := 0; s < 10; s++ {
		m.Record(at(s), float64(s), 0)
	}
	m.Resize(4*time.Second, time.Second, AggregationLinear)
	if diff := cmp.Diff(averages{7.5, 9, true}, observe(m, MetricConcurrency, 9)); diff != "" {
		t.Errorf("shrunk (-want +got):\n%s", diff)
	}
	m.Resize(20*time.Second, 2*time.Second, AggregationLinear)
	if diff := cmp.Diff(averages{7.5, 9, true}, observe(m, MetricConcurrency, 9)); diff != "" {
		t.Errorf("grown again keeps only what survived (-want +got):\n%s", diff)
	}
}
