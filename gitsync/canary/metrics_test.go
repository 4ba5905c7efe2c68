package canary

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var inf = math.Inf(1)

// queueBounds are dataplane/queue's latency buckets with +Inf.
var queueBounds = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 600, inf}

// hist builds cumulative buckets on queueBounds from counts, padding the
// rest with the last count.
func hist(counts ...float64) []Bucket {
	bs := make([]Bucket, len(queueBounds))
	for i, ub := range queueBounds {
		c := counts[min(i, len(counts)-1)]
		bs[i] = Bucket{UpperBound: ub, Count: c}
	}
	return bs
}

// fixtureSnapshot is what testdata/queue-proxy-metrics.txt holds.
func fixtureSnapshot() Snapshot {
	return Snapshot{Requests: 200, Errors5xx: 15, Buckets: hist(0, 12, 58, 121, 170, 186, 195, 199, 200)}
}

func TestParseMetricsFixture(t *testing.T) {
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ParseMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fixtureSnapshot(), got); diff != "" {
		t.Errorf("ParseMetrics (-want +got):\n%s", diff)
	}
}

func TestParseMetrics(t *testing.T) {
	const (
		help    = "# TYPE knit_queue_requests_total counter\n"
		latency = "# TYPE knit_queue_request_duration_seconds histogram\n"
	)
	tests := []struct {
		name, body string
		want       Snapshot
		wantErr    string
	}{
		{"two series of one family add up", help +
			`knit_queue_requests_total{code_class="2xx",revision_name="a"} 7` + "\n" +
			`knit_queue_requests_total{code_class="5xx",revision_name="a"} 1` + "\n" +
			`knit_queue_requests_total{code_class="5xx",revision_name="b"} 2` + "\n" +
			latency +
			`knit_queue_request_duration_seconds_bucket{revision_name="a",le="0.1"} 6` + "\n" +
			`knit_queue_request_duration_seconds_bucket{revision_name="a",le="+Inf"} 8` + "\n" +
			`knit_queue_request_duration_seconds_count{revision_name="a"} 8` + "\n" +
			`knit_queue_request_duration_seconds_bucket{revision_name="b",le="0.1"} 1` + "\n" +
			`knit_queue_request_duration_seconds_bucket{revision_name="b",le="+Inf"} 2` + "\n" +
			`knit_queue_request_duration_seconds_count{revision_name="b"} 2` + "\n",
			Snapshot{Requests: 10, Errors5xx: 3, Buckets: []Bucket{{0.1, 7}, {inf, 10}}}, ""},
		{"a histogram without its +Inf line takes the count", help +
			`knit_queue_requests_total{code_class="2xx"} 3` + "\n" + latency +
			`knit_queue_request_duration_seconds_bucket{le="0.5"} 2` + "\n" +
			`knit_queue_request_duration_seconds_count 3` + "\n",
			Snapshot{Requests: 3, Buckets: []Bucket{{0.5, 2}, {inf, 3}}}, ""},
		{"not the queue-proxy", "# TYPE go_goroutines gauge\ngo_goroutines 16\n", Snapshot{},
			"no knit_queue_requests_total or knit_queue_request_duration_seconds: not a knit queue-proxy's metrics"},
		{"wrong type", "# TYPE knit_queue_requests_total gauge\nknit_queue_requests_total 3\n" + latency +
			"knit_queue_request_duration_seconds_count 3\n", Snapshot{},
			"knit_queue_requests_total is a GAUGE, want a counter"},
		{"not the text format", "<html>nope</html>\n", Snapshot{},
			`parsing metrics: text format parsing error in line 1: invalid metric name`},
		// Found by FuzzParseMetrics: numbers no counter holds.
		{"a negative counter", help + "knit_queue_requests_total -3\n" + latency + "knit_queue_request_duration_seconds_count 3\n", Snapshot{},
			"knit_queue_requests_total is -3: not a knit queue-proxy's metrics"},
		{"a NaN counter", help + "knit_queue_requests_total NaN\n" + latency + "knit_queue_request_duration_seconds_count 3\n", Snapshot{},
			"knit_queue_requests_total is NaN: not a knit queue-proxy's metrics"},
		{"buckets that are not cumulative", help + "knit_queue_requests_total 3\n" + latency +
			`knit_queue_request_duration_seconds_bucket{le="0.1"} 5` + "\n" + `knit_queue_request_duration_seconds_bucket{le="+Inf"} 3` + "\n", Snapshot{},
			"knit_queue_request_duration_seconds bucket le=+Inf counts 3, fewer than le=0.1's 5: buckets are cumulative: not a knit queue-proxy's metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMetrics(strings.NewReader(tt.body))
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSum(t *testing.T) {
	a := Snapshot{Requests: 10, Errors5xx: 1, Buckets: []Bucket{{0.1, 4}, {0.5, 9}, {inf, 10}}}
	b := Snapshot{Requests: 5, Errors5xx: 2, Buckets: []Bucket{{0.1, 1}, {0.5, 5}, {inf, 5}}}
	other := Snapshot{Requests: 3, Buckets: []Bucket{{0.1, 3}, {1, 3}, {inf, 3}}} // another knit version's buckets
	tests := []struct {
		name  string
		snaps []Snapshot
		want  Snapshot
	}{
		{"none", nil, Snapshot{}},
		{"one", []Snapshot{a}, a},
		{"same buckets", []Snapshot{a, b}, Snapshot{Requests: 15, Errors5xx: 3, Buckets: []Bucket{{0.1, 5}, {0.5, 14}, {inf, 15}}}},
		{"the bounds all have", []Snapshot{a, b, other}, Snapshot{Requests: 18, Errors5xx: 3, Buckets: []Bucket{{0.1, 8}, {inf, 18}}}},
		{"zero snapshots add nothing", []Snapshot{{}, a, {}}, a},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Sum(tt.snaps...)); diff != "" {
				t.Errorf("Sum (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDelta(t *testing.T) {
	before := Snapshot{Requests: 100, Errors5xx: 4, Buckets: []Bucket{{0.1, 90}, {inf, 100}}}
	after := Snapshot{Requests: 150, Errors5xx: 10, Buckets: []Bucket{{0.1, 120}, {inf, 150}}}
	restarted := Snapshot{Requests: 30, Errors5xx: 1, Buckets: []Bucket{{0.1, 25}, {inf, 30}}}
	tests := []struct {
		name          string
		before, after Snapshot
		want          Snapshot
	}{
		{"counters grew", before, after, Snapshot{Requests: 50, Errors5xx: 6, Buckets: []Bucket{{0.1, 30}, {inf, 50}}}},
		{"nothing served", after, after, Snapshot{Buckets: []Bucket{{0.1, 0}, {inf, 0}}}},
		{"no before: everything since start", Snapshot{}, after, after},
		{"restarted: requests went down, counts from zero", after, restarted, restarted},
		{"restarted: only errors went down", before,
			Snapshot{Requests: 100, Errors5xx: 0, Buckets: []Bucket{{0.1, 100}, {inf, 100}}},
			Snapshot{Requests: 100, Errors5xx: 0, Buckets: []Bucket{{0.1, 100}, {inf, 100}}}},
		{"restarted: a bucket went down", before,
			Snapshot{Requests: 120, Errors5xx: 4, Buckets: []Bucket{{0.1, 80}, {inf, 120}}},
			Snapshot{Requests: 120, Errors5xx: 4, Buckets: []Bucket{{0.1, 80}, {inf, 120}}}},
		{"new buckets mean a new queue-proxy", before,
			Snapshot{Requests: 130, Buckets: []Bucket{{0.05, 1}, {0.1, 100}, {inf, 130}}},
			Snapshot{Requests: 130, Buckets: []Bucket{{0.05, 1}, {0.1, 100}, {inf, 130}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Delta(tt.before, tt.after)); diff != "" {
				t.Errorf("Delta (-want +got):\n%s", diff)
			}
		})
	}
}

// A restart hides in a sum whose other replica grew: per replica, it
// does not.
func TestDeltaReplicas(t *testing.T) {
	snap := func(req, errs, fast float64) Snapshot {
		return Snapshot{Requests: req, Errors5xx: errs, Buckets: []Bucket{{0.1, fast}, {inf, req}}}
	}
	before := map[string]Snapshot{
		"http://10.0.0.1:9091/metrics": snap(100, 0, 100),
		"http://10.0.0.2:9091/metrics": snap(80, 0, 80),
		"http://10.0.0.3:9091/metrics": snap(50, 0, 50), // scaled down during the window
	}
	after := map[string]Snapshot{
		"http://10.0.0.1:9091/metrics": snap(160, 0, 160),
		"http://10.0.0.2:9091/metrics": snap(20, 20, 20), // restarted, then failed everything, fast
		"http://10.0.0.4:9091/metrics": snap(10, 0, 10),  // started during the window
	}
	want := snap(60+20+10, 20, 60+20+10)
	if diff := cmp.Diff(want, DeltaReplicas(before, after)); diff != "" {
		t.Errorf("DeltaReplicas (-want +got):\n%s", diff)
	}
	// Summed first, replica 2's restart is not seen: 10 more requests
	// than before in all, 20 more errors, a 200% error rate.
	delete(before, "http://10.0.0.3:9091/metrics")
	var b, a []Snapshot
	for _, s := range before {
		b = append(b, s)
	}
	for _, s := range after {
		a = append(a, s)
	}
	if diff := cmp.Diff(snap(10, 20, 10), Delta(Sum(b...), Sum(a...))); diff != "" {
		t.Errorf("Delta of sums (-want +got):\n%s", diff)
	}
}
