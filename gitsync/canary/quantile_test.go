package canary

import (
	"math"
	"testing"
)

func TestQuantile(t *testing.T) {
	// 100 observations spread evenly over (0, 1]: 25 per quarter.
	uniform := Snapshot{Buckets: []Bucket{{0.25, 25}, {0.5, 50}, {0.75, 75}, {1, 100}, {inf, 100}}}
	// All 10 observations between 100 and 250 ms.
	oneBucket := Snapshot{Buckets: []Bucket{{0.1, 0}, {0.25, 10}, {0.5, 10}, {inf, 10}}}
	// 4 of 100 observations above the highest finite bound.
	overflow := Snapshot{Buckets: []Bucket{{0.5, 90}, {1, 96}, {inf, 100}}}
	tests := []struct {
		name string
		s    Snapshot
		q    float64
		want float64
	}{
		{"uniform median", uniform, 0.5, 0.5},
		{"uniform p90", uniform, 0.9, 0.9},
		{"uniform p99", uniform, 0.99, 0.99},
		{"uniform p10", uniform, 0.1, 0.1},
		{"uniform min", uniform, 0, 0},
		{"uniform max", uniform, 1, 1},
		{"inside one bucket interpolates from its lower bound", oneBucket, 0.5, 0.175},
		{"inside one bucket, p99", oneBucket, 0.99, 0.2485},
		{"the fixture's p99", fixtureSnapshot(), 0.99, 0.2125},
		{"the fixture's median", fixtureSnapshot(), 0.5, 0.005 + 0.005*42/63},
		{"in the +Inf bucket: the highest finite bound", overflow, 0.99, 1},
		{"below the +Inf bucket still interpolates", overflow, 0.93, 0.75},
		{"no observations", Snapshot{Buckets: []Bucket{{0.1, 0}, {inf, 0}}}, 0.5, math.NaN()},
		{"no histogram", Snapshot{}, 0.5, math.NaN()},
		{"no +Inf bucket", Snapshot{Buckets: []Bucket{{0.1, 1}, {0.5, 2}}}, 0.5, math.NaN()},
		{"q below 0", uniform, -0.1, math.Inf(-1)},
		{"q above 1", uniform, 1.1, math.Inf(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.s.Quantile(tt.q)
			if math.IsNaN(tt.want) {
				if !math.IsNaN(got) {
					t.Errorf("Quantile(%v) = %v, want NaN", tt.q, got)
				}
				return
			}
			if got != tt.want && !(math.Abs(got-tt.want) <= 1e-12) {
				t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}
