package canary

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseAnnotation: whatever a user writes in a canary request is a
// Plan that validates or an error, never a panic, and a Plan that parsed
// is written back (String, as the PR shows it) in words that parse to the
// same Plan.
func FuzzParseAnnotation(f *testing.F) {
	for _, s := range []string{
		"10,25,50 every 2m", "5,50 every 30s automerge", "10, 25, 50 every 1h max-5xx 2 max-p99 1.5x min-requests 50",
		"100 every 5s", "1,2,3,4,5,6,7,8,9,10 every 1m", "10%,20% every 90s max-5xx 0.5%", "EVERY 2M 10",
		"every", "max-p99 0.5x", "10,10 every 1m", "50,25 every 1m", "10 every 2", "10 every 1ms", "automerge automerge",
		"max-5xx 1e2", "max-p99 1000x", "min-requests 9223372036854775807", ",", "10,,20", "0x10", "-5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := ParseAnnotation(spec)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParseAnnotation(%q) = %+v, which does not validate: %v", spec, p, err)
		}
		again, err := ParseAnnotation(p.String())
		if err != nil {
			t.Fatalf("ParseAnnotation(%q).String() = %q does not parse: %v", spec, p.String(), err)
		}
		if diff := cmp.Diff(p, again); diff != "" {
			t.Fatalf("%q → %q → a different plan (-first +again):\n%s", spec, p.String(), diff)
		}
	})
}

// FuzzResolve: a pull request's description and labels (any text a
// forge sends) and a branch's annotation resolve to a valid Plan, to no
// canary, or to an error naming what was not understood.
func FuzzResolve(f *testing.F) {
	f.Add("Fixes the login.\n\nknit: canary 10,50 every 1m automerge\r\n", "knit/canary", "bug", "")
	f.Add("prose only", "knit/canary: 5,50 every 30s", "KNIT/CANARY:5,50 every 30s", "10 every 1m")
	f.Add("knit:canary", "knit/canary-beta", "", "  ")
	f.Add("  KNIT: CANARY: every 5s 1", "knit/canary: 1", "knit/canary: 2", "")
	f.Fuzz(func(t *testing.T, description, label1, label2, annotation string) {
		p, source, err := Resolve(description, []string{label1, label2}, annotation)
		switch {
		case err != nil && source == SourceNone:
			t.Fatalf("an error with no source: %v", err)
		case err != nil:
		case source == SourceNone:
			if !cmp.Equal(p, Plan{}) {
				t.Fatalf("no source but a plan %+v", p)
			}
		default:
			if err := p.Validate(); err != nil {
				t.Fatalf("resolved from %s to %+v, which does not validate: %v", source, p, err)
			}
		}
	})
}

// FuzzParseMetrics: any body a metrics URL answers is an error or a
// Snapshot the analysis can use — finite, non-negative counts, cumulative
// buckets in ascending order ending at +Inf — and analysing it panics
// nowhere.
func FuzzParseMetrics(f *testing.F) {
	fixtureBody, err := os.ReadFile(fixture)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixtureBody)
	const help = "# TYPE knit_queue_requests_total counter\n# TYPE knit_queue_request_duration_seconds histogram\n"
	for _, body := range []string{
		help + "knit_queue_requests_total 1\nknit_queue_request_duration_seconds_count 1\n",
		help + "knit_queue_requests_total{code_class=\"5xx\"} NaN\nknit_queue_request_duration_seconds_bucket{le=\"+Inf\"} 1\n",
		help + "knit_queue_requests_total -3\nknit_queue_request_duration_seconds_bucket{le=\"0.1\"} 5\nknit_queue_request_duration_seconds_bucket{le=\"+Inf\"} 2\n",
		help + "knit_queue_requests_total +Inf\nknit_queue_request_duration_seconds_bucket{le=\"NaN\"} 1\n",
		help + "knit_queue_request_duration_seconds_bucket{le=\"1\",a=\"x\"} 1\nknit_queue_request_duration_seconds_bucket{le=\"2\",a=\"y\"} 1\nknit_queue_requests_total 2\n",
		"# TYPE knit_queue_requests_total gauge\nknit_queue_requests_total 1\n",
		"garbage {{{",
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := ParseMetrics(bytes.NewReader(body))
		if err != nil {
			return
		}
		for name, v := range map[string]float64{"requests": s.Requests, "5xx": s.Errors5xx} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%s = %v: a counter is finite and never negative", name, v)
			}
		}
		if len(s.Buckets) == 0 || !math.IsInf(s.Buckets[len(s.Buckets)-1].UpperBound, 1) {
			t.Fatalf("buckets %v do not end at +Inf", s.Buckets)
		}
		for i, b := range s.Buckets {
			if math.IsNaN(b.UpperBound) || math.IsNaN(b.Count) || math.IsInf(b.Count, 0) || b.Count < 0 {
				t.Fatalf("bucket %d %+v: bounds are numbers, counts finite and never negative", i, b)
			}
			if i > 0 && (b.UpperBound <= s.Buckets[i-1].UpperBound || b.Count < s.Buckets[i-1].Count) {
				t.Fatalf("buckets %v are not cumulative in ascending order", s.Buckets)
			}
		}
		if q := s.Quantile(0.99); !math.IsNaN(q) && q < 0 && s.Buckets[0].UpperBound >= 0 {
			t.Fatalf("p99 %v below every bound of %v", q, s.Buckets)
		}
		if d := Delta(s, s); d.Requests != 0 || d.Errors5xx != 0 {
			t.Fatalf("Delta of a snapshot with itself = %+v", d)
		}
		v := Analyze(s, Sum(s, s), DefaultThresholds())
		if v.Reason == "" || strings.Contains(v.Reason, "NaN") {
			t.Fatalf("verdict %+v: a reason without numbers", v)
		}
	})
}
