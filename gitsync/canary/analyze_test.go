package canary

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// window is a revision's step window: requests, 5xx among them, and
// latencies all inside one bucket of queueBounds (index into it), so the
// p99 is that bucket's lower bound + 99% of its width.
func window(requests, errors float64, bucket int) Snapshot {
	counts := make([]float64, len(queueBounds))
	for i := bucket; i < len(counts); i++ {
		counts[i] = requests
	}
	return Snapshot{Requests: requests, Errors5xx: errors, Buckets: hist(counts...)}
}

const (
	b2ms   = 1 // (1 ms, 2.5 ms]: p99 2.485 ms
	b10ms  = 3 // (5 ms, 10 ms]: p99 9.95 ms
	b50ms  = 5 // (25 ms, 50 ms]: p99 49.75 ms
	b100ms = 6 // (50 ms, 100 ms]: p99 99.5 ms
	b250ms = 7 // (100 ms, 250 ms]: p99 248.5 ms
)

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

func TestAnalyze(t *testing.T) {
	def := DefaultThresholds()
	tests := []struct {
		name           string
		stable, canary Snapshot
		t              Thresholds
		want           Verdict
	}{
		{"too few canary requests", window(180, 0, b50ms), window(12, 12, b250ms), def, Verdict{
			Result: Inconclusive,
			Reason: "canary served 12 of the 20 requests a verdict needs: waiting for more traffic",
			Canary: Numbers{Requests: 12, Errors5xx: 12, ErrorRate: 1, P99: ms(248.5)},
			Stable: Numbers{Requests: 180, ErrorRate: 0, P99: ms(49.75)},
		}},
		{"no canary traffic at all", window(180, 0, b50ms), Snapshot{}, def, Verdict{
			Result: Inconclusive,
			Reason: "canary served 0 of the 20 requests a verdict needs: waiting for more traffic",
			Stable: Numbers{Requests: 180, P99: ms(49.75)},
		}},
		{"as good as stable", window(180, 1, b50ms), window(50, 0, b50ms), def, Verdict{
			Result: Pass,
			Reason: "5xx rate 0.0% (0 of 50) vs stable 0.6% (1 of 180), within the 1.0 point allowance; " +
				"p99 50 ms vs stable 50 ms, within 1.2 × 50 ms + 10 ms = 70 ms",
			Canary: Numbers{Requests: 50, P99: ms(49.75)},
			Stable: Numbers{Requests: 180, Errors5xx: 1, ErrorRate: 1.0 / 180, P99: ms(49.75)},
		}},
		{"the issue's failure: 5xx over the allowance", window(180, 0, b50ms), window(50, 6, b50ms), def, Verdict{
			Result: Fail,
			Reason: "5xx rate 12.0% (6 of 50) vs stable 0.0% (0 of 180): over the 1.0 point allowance",
			Canary: Numbers{Requests: 50, Errors5xx: 6, ErrorRate: 0.12, P99: ms(49.75)},
			Stable: Numbers{Requests: 180, P99: ms(49.75)},
		}},
		{"exactly at the 5xx allowance passes", window(100, 1, b50ms), window(100, 2, b50ms), def, Verdict{
			Result: Pass,
			Reason: "5xx rate 2.0% (2 of 100) vs stable 1.0% (1 of 100), within the 1.0 point allowance; " +
				"p99 50 ms vs stable 50 ms, within 1.2 × 50 ms + 10 ms = 70 ms",
			Canary: Numbers{Requests: 100, Errors5xx: 2, ErrorRate: 0.02, P99: ms(49.75)},
			Stable: Numbers{Requests: 100, Errors5xx: 1, ErrorRate: 0.01, P99: ms(49.75)},
		}},
		{"a flaky stable raises the bar with it", window(200, 20, b50ms), window(40, 4, b50ms), def, Verdict{
			Result: Pass,
			Reason: "5xx rate 10.0% (4 of 40) vs stable 10.0% (20 of 200), within the 1.0 point allowance; " +
				"p99 50 ms vs stable 50 ms, within 1.2 × 50 ms + 10 ms = 70 ms",
			Canary: Numbers{Requests: 40, Errors5xx: 4, ErrorRate: 0.1, P99: ms(49.75)},
			Stable: Numbers{Requests: 200, Errors5xx: 20, ErrorRate: 0.1, P99: ms(49.75)},
		}},
		{"p99 over ratio × stable + slack", window(180, 0, b50ms), window(50, 0, b250ms), def, Verdict{
			Result: Fail,
			Reason: "p99 248 ms vs stable 50 ms: over 1.2 × 50 ms + 10 ms = 70 ms",
			Canary: Numbers{Requests: 50, P99: ms(248.5)},
			Stable: Numbers{Requests: 180, P99: ms(49.75)},
		}},
		{"the slack lets a fast service be 4x slower", window(180, 0, b2ms), window(50, 0, b10ms), def, Verdict{
			Result: Pass,
			Reason: "5xx rate 0.0% (0 of 50) vs stable 0.0% (0 of 180), within the 1.0 point allowance; " +
				"p99 10.0 ms vs stable 2.5 ms, within 1.2 × 2.5 ms + 10 ms = 13 ms",
			Canary: Numbers{Requests: 50, P99: ms(9.95)},
			Stable: Numbers{Requests: 180, P99: ms(2.485)},
		}},
		{"but not a bucket slower than 10 ms", window(180, 0, b10ms), window(50, 0, b10ms+1), def, Verdict{
			Result: Fail,
			Reason: "p99 25 ms vs stable 10.0 ms: over 1.2 × 10.0 ms + 10 ms = 22 ms",
			Canary: Numbers{Requests: 50, P99: ms(24.85)},
			Stable: Numbers{Requests: 180, P99: ms(9.95)},
		}},
		{"both rules broken: both named", window(180, 0, b50ms), window(50, 6, b250ms), def, Verdict{
			Result: Fail,
			Reason: "5xx rate 12.0% (6 of 50) vs stable 0.0% (0 of 180): over the 1.0 point allowance; " +
				"p99 248 ms vs stable 50 ms: over 1.2 × 50 ms + 10 ms = 70 ms",
			Canary: Numbers{Requests: 50, Errors5xx: 6, ErrorRate: 0.12, P99: ms(248.5)},
			Stable: Numbers{Requests: 180, P99: ms(49.75)},
		}},
		{"user thresholds: 5 points and 6x", window(180, 0, b50ms), window(50, 2, b250ms),
			Thresholds{Max5xxPoints: 5, MaxP99Ratio: 6, P99Slack: 10 * time.Millisecond, MinRequests: 50}, Verdict{
				Result: Pass,
				Reason: "5xx rate 4.0% (2 of 50) vs stable 0.0% (0 of 180), within the 5.0 point allowance; " +
					"p99 248 ms vs stable 50 ms, within 6 × 50 ms + 10 ms = 308 ms",
				Canary: Numbers{Requests: 50, Errors5xx: 2, ErrorRate: 0.04, P99: ms(248.5)},
				Stable: Numbers{Requests: 180, P99: ms(49.75)},
			}},
		{"user min-requests makes 50 too few", window(180, 0, b50ms), window(50, 0, b50ms),
			Thresholds{Max5xxPoints: 1, MaxP99Ratio: 1.2, P99Slack: 10 * time.Millisecond, MinRequests: 100}, Verdict{
				Result: Inconclusive,
				Reason: "canary served 50 of the 100 requests a verdict needs: waiting for more traffic",
				Canary: Numbers{Requests: 50, P99: ms(49.75)},
				Stable: Numbers{Requests: 180, P99: ms(49.75)},
			}},
		{"no stable traffic: absolute 5xx, latency not judged", Snapshot{}, window(50, 0, b250ms), def, Verdict{
			Result: Pass,
			Reason: "5xx rate 0.0% (0 of 50), within the absolute 1.0% allowance " +
				"(stable served 0 requests, too few to compare with: judged on absolute thresholds, latency not judged)",
			Canary: Numbers{Requests: 50, P99: ms(248.5)},
		}},
		{"no stable traffic and 5xx over the absolute allowance", Snapshot{}, window(50, 1, b50ms), def, Verdict{
			Result: Fail,
			Reason: "5xx rate 2.0% (1 of 50): over the absolute 1.0% allowance " +
				"(stable served 0 requests, too few to compare with: judged on absolute thresholds, latency not judged)",
			Canary: Numbers{Requests: 50, Errors5xx: 1, ErrorRate: 0.02, P99: ms(49.75)},
		}},
		{"too little stable traffic counts as none", window(5, 5, b10ms), window(100, 3, b50ms), def, Verdict{
			Result: Fail,
			Reason: "5xx rate 3.0% (3 of 100): over the absolute 1.0% allowance " +
				"(stable served 5 requests, too few to compare with: judged on absolute thresholds, latency not judged)",
			Canary: Numbers{Requests: 100, Errors5xx: 3, ErrorRate: 0.03, P99: ms(49.75)},
			Stable: Numbers{Requests: 5, Errors5xx: 5, ErrorRate: 1, P99: ms(9.95)},
		}},
		{"zero thresholds never pass a canary without traffic", window(100, 0, b50ms), Snapshot{}, Thresholds{}, Verdict{
			Result: Inconclusive,
			Reason: "canary served 0 of the 1 requests a verdict needs: waiting for more traffic",
			Stable: Numbers{Requests: 100, P99: ms(49.75)},
		}},
		{"counts without histograms: latency not compared", Snapshot{Requests: 100}, Snapshot{Requests: 50}, def, Verdict{
			Result: Pass,
			Reason: "5xx rate 0.0% (0 of 50) vs stable 0.0% (0 of 100), within the 1.0 point allowance; p99 not compared: no latency histogram",
			Canary: Numbers{Requests: 50},
			Stable: Numbers{Requests: 100},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Analyze(tt.stable, tt.canary, tt.t)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Analyze (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResultString(t *testing.T) {
	for r, want := range map[Result]string{Pass: "Pass", Fail: "Fail", Inconclusive: "Inconclusive", Result(7): "Result(7)"} {
		if got := r.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(r), got, want)
		}
	}
}
