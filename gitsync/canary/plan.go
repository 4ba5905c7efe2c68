package canary

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Where a user asks for a canary.
const (
	// DescriptionPrefix starts the line of a PR description that asks for
	// a canary (matched case-insensitively).
	DescriptionPrefix = "knit: canary"
	// LabelName is the PR label that asks for a canary, alone (defaults)
	// or followed by ": <spec>".
	LabelName = "knit/canary"
	// AnnotationKey is the annotation on the branch's Service whose value
	// is a spec.
	AnnotationKey = "knit.dev/canary"
)

// Limits on a plan: a canary must be watched long enough for the
// queue-proxies' counters to move between two scrapes, and a rollout of
// more than ten steps is a mistake rather than caution.
const (
	MinInterval = 5 * time.Second
	MaxSteps    = 10
)

// Plan is a canary as the user asked for it: the percent of the base
// Service's traffic given to the PR's revision at each step, in order, how
// long each step is watched before it is judged, and whether a canary that
// passes every step is merged.
type Plan struct {
	// Steps are percents of traffic, strictly increasing, each 1..100.
	Steps []int64
	// Interval is each step's analysis window.
	Interval time.Duration
	// AutoMerge merges the PR through the forge once every step passed.
	AutoMerge bool
	// Thresholds decide each step's verdict.
	Thresholds Thresholds
}

// Thresholds are what the canary is allowed compared with the stable
// revision over the same window. Analyze uses them exactly as given, so a
// Plan always carries a complete set: parsing starts from
// DefaultThresholds and overrides what the user wrote.
type Thresholds struct {
	// Max5xxPoints is how many percentage points the canary's 5xx rate
	// may exceed the stable revision's by (1 allows 1.5% against 0.5%).
	// Without a stable baseline it is the canary's absolute ceiling.
	Max5xxPoints float64
	// MaxP99Ratio and P99Slack bound the canary's p99 latency to
	// MaxP99Ratio × stable's p99 + P99Slack. The slack keeps a fast
	// service (a 2 ms p99) from failing on noise a histogram bucket wide.
	MaxP99Ratio float64
	P99Slack    time.Duration
	// MinRequests is how many requests the canary must serve in a window
	// before it is judged at all; fewer is Inconclusive.
	MinRequests int64
}

// DefaultThresholds are the issue's: 5xx rate ≤ stable's + 1 point, p99 ≤
// 1.2 × stable's + 10 ms, at least 20 canary requests per step.
func DefaultThresholds() Thresholds {
	return Thresholds{Max5xxPoints: 1, MaxP99Ratio: 1.2, P99Slack: 10 * time.Millisecond, MinRequests: 20}
}

// DefaultPlan is what a bare `knit/canary` label or `knit: canary` line
// asks for: 10%, 25%, 50%, two minutes each, no automerge.
func DefaultPlan() Plan {
	return Plan{Steps: []int64{10, 25, 50}, Interval: 2 * time.Minute, Thresholds: DefaultThresholds()}
}

// Validate reports the first rule p breaks, in the words a parse error
// would use, for plans built in code rather than parsed.
func (p Plan) Validate() error {
	if err := validateSteps(p.Steps); err != nil {
		return fmt.Errorf("steps %q: %w", formatSteps(p.Steps), err)
	}
	if p.Interval < MinInterval {
		return fmt.Errorf("interval %q: %w", formatDuration(p.Interval), errShortInterval)
	}
	t := p.Thresholds
	switch {
	case t.Max5xxPoints < 0 || t.Max5xxPoints > 100:
		return fmt.Errorf("max-5xx %v: %w", t.Max5xxPoints, errPoints)
	case t.MaxP99Ratio < 1:
		return fmt.Errorf("max-p99 %vx: %w", t.MaxP99Ratio, errRatio)
	case t.P99Slack < 0:
		return fmt.Errorf("p99 slack %v is negative", t.P99Slack)
	case t.MinRequests < 1:
		return fmt.Errorf("min-requests %d: %w", t.MinRequests, errMinRequests)
	}
	return nil
}

// String is p in the annotation's grammar, thresholds only where they
// differ from the defaults: ParseAnnotation(p.String()) gives p back. It is
// how a plan is shown on the PR and in `kubectl get pr`.
func (p Plan) String() string {
	parts := []string{formatSteps(p.Steps), "every", formatDuration(p.Interval)}
	if p.AutoMerge {
		parts = append(parts, "automerge")
	}
	d, t := DefaultThresholds(), p.Thresholds
	if t.Max5xxPoints != d.Max5xxPoints {
		parts = append(parts, "max-5xx", formatFloat(t.Max5xxPoints))
	}
	if t.MaxP99Ratio != d.MaxP99Ratio {
		parts = append(parts, "max-p99", formatFloat(t.MaxP99Ratio)+"x")
	}
	if t.MinRequests != d.MinRequests {
		parts = append(parts, "min-requests", strconv.FormatInt(t.MinRequests, 10))
	}
	return strings.Join(parts, " ")
}

func formatSteps(steps []int64) string {
	s := make([]string, len(steps))
	for i, p := range steps {
		s[i] = strconv.FormatInt(p, 10)
	}
	return strings.Join(s, ",")
}

// formatDuration writes 2m rather than time.Duration's 2m0s; both parse.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
