package canary

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Result is a step's outcome. Inconclusive is neither: the canary has not
// served enough requests in the window to be judged, and the caller keeps
// watching (extends the step) rather than promoting or rolling back on
// noise.
type Result int

const (
	Inconclusive Result = iota
	Pass
	Fail
)

func (r Result) String() string {
	switch r {
	case Pass:
		return "Pass"
	case Fail:
		return "Fail"
	case Inconclusive:
		return "Inconclusive"
	}
	return fmt.Sprintf("Result(%d)", int(r))
}

// Verdict is a step's judgment with the numbers it rests on, for the PR's
// status, comment and `kubectl get pr`.
type Verdict struct {
	Result Result
	// Reason is one line for a person reading the PR: the numbers
	// compared and the allowance they were held to.
	Reason         string
	Canary, Stable Numbers
}

// Numbers summarize one revision's window.
type Numbers struct {
	Requests  float64
	Errors5xx float64
	// ErrorRate is Errors5xx/Requests (0 without requests).
	ErrorRate float64
	// P99 is the 99th percentile latency as Quantile estimates it (0
	// without requests or histogram).
	P99 time.Duration
}

// epsilon keeps float rounding from failing a canary exactly at its
// allowance (1 of 100 against 0 of 100 with 1 point allowed passes).
const epsilon = 1e-9

// Analyze judges the canary against the stable revision over the same
// window (both Deltas of their replicas' Snapshots):
//
//   - fewer than t.MinRequests canary requests: Inconclusive;
//   - 5xx rate above stable's + t.Max5xxPoints percentage points: Fail;
//   - p99 above t.MaxP99Ratio × stable's p99 + t.P99Slack: Fail;
//   - otherwise Pass.
//
// A stable revision that served fewer than t.MinRequests has no baseline
// worth comparing with — a share of 100% - step when traffic is thin —
// so the canary is then held to absolute thresholds: its 5xx rate to
// t.Max5xxPoints percent, its latency not at all (there is no latency
// that is absolutely too slow for every app); the reason says so. Both
// rules are always evaluated, so a Fail names every broken one.
func Analyze(stable, canary Snapshot, t Thresholds) Verdict {
	v := Verdict{Canary: numbers(canary), Stable: numbers(stable)}
	c, s := v.Canary, v.Stable
	// At least one request, whatever t says: zero Thresholds must not
	// pass a canary nobody called.
	minRequests := max(t.MinRequests, 1)
	if c.Requests < float64(minRequests) {
		v.Result = Inconclusive
		v.Reason = fmt.Sprintf("canary served %s of the %d requests a verdict needs: waiting for more traffic", count(c.Requests), minRequests)
		return v
	}
	var failed, passed []string
	judge := func(ok bool, msg string) {
		if ok {
			passed = append(passed, msg)
		} else {
			failed = append(failed, msg)
		}
	}
	baseline := s.Requests >= float64(minRequests)
	if baseline {
		allowed := s.ErrorRate + t.Max5xxPoints/100
		ok := c.ErrorRate <= allowed+epsilon
		judge(ok, fmt.Sprintf("5xx rate %s vs stable %s%s the %.1f point allowance",
			rate(c), rate(s), overOrWithin(ok), t.Max5xxPoints))

		cp, sp := canary.Quantile(0.99), stable.Quantile(0.99)
		if math.IsNaN(cp) || math.IsNaN(sp) {
			passed = append(passed, "p99 not compared: no latency histogram")
		} else {
			allowed := t.MaxP99Ratio*sp + t.P99Slack.Seconds()
			ok := cp <= allowed+epsilon
			judge(ok, fmt.Sprintf("p99 %s vs stable %s%s %s × %s + %s = %s",
				latency(cp), latency(sp), overOrWithin(ok), formatFloat(t.MaxP99Ratio), latency(sp), latency(t.P99Slack.Seconds()), latency(allowed)))
		}
	} else {
		ok := c.ErrorRate <= t.Max5xxPoints/100+epsilon
		judge(ok, fmt.Sprintf("5xx rate %s%s the absolute %.1f%% allowance", rate(c), overOrWithin(ok), t.Max5xxPoints))
	}
	v.Result, v.Reason = Pass, strings.Join(passed, "; ")
	if len(failed) > 0 {
		v.Result, v.Reason = Fail, strings.Join(failed, "; ")
	}
	if !baseline {
		v.Reason += fmt.Sprintf(" (stable served %s requests, too few to compare with: judged on absolute thresholds, latency not judged)", count(s.Requests))
	}
	return v
}

func numbers(s Snapshot) Numbers {
	n := Numbers{Requests: s.Requests, Errors5xx: s.Errors5xx}
	if s.Requests > 0 {
		n.ErrorRate = s.Errors5xx / s.Requests
	}
	if p := s.Quantile(0.99); !math.IsNaN(p) && !math.IsInf(p, 0) {
		n.P99 = time.Duration(math.Round(p * float64(time.Second)))
	}
	return n
}

func overOrWithin(ok bool) string {
	if ok {
		return ", within"
	}
	return ": over"
}

// rate is "12.0% (6 of 50)".
func rate(n Numbers) string {
	return fmt.Sprintf("%.1f%% (%s of %s)", 100*n.ErrorRate, count(n.Errors5xx), count(n.Requests))
}

// count writes a counter difference, a whole number unless a counter was
// fed fractions.
func count(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.1f", f)
}

// latency writes seconds the way a person compares them: 0.4 ms, 45 ms,
// 1.2 s.
func latency(sec float64) string {
	ms := sec * 1000
	switch {
	case ms < 10:
		return fmt.Sprintf("%.1f ms", ms)
	case ms < 10000:
		return fmt.Sprintf("%.0f ms", ms)
	default:
		return fmt.Sprintf("%.1f s", sec)
	}
}
