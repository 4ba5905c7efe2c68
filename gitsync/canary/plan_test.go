package canary

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A plan shown on a PR can be pasted back as an annotation.
func TestPlanStringRoundTrips(t *testing.T) {
	tests := []struct {
		plan Plan
		want string
	}{
		{DefaultPlan(), "10,25,50 every 2m"},
		{plan(func(p *Plan) { p.Steps, p.Interval, p.AutoMerge = []int64{5, 100}, 90*time.Second, true }), "5,100 every 1m30s automerge"},
		{plan(func(p *Plan) { p.Interval = 2 * time.Hour }), "10,25,50 every 2h"},
		{plan(func(p *Plan) {
			p.Thresholds.Max5xxPoints, p.Thresholds.MaxP99Ratio, p.Thresholds.MinRequests = 0.5, 1.5, 50
		}), "10,25,50 every 2m max-5xx 0.5 max-p99 1.5x min-requests 50"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.plan.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			back, err := ParseAnnotation(tt.plan.String())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.plan, back); diff != "" {
				t.Errorf("parsed back (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanValidate(t *testing.T) {
	tests := []struct {
		name string
		plan Plan
		want string
	}{
		{"default", DefaultPlan(), ""},
		{"no steps", plan(func(p *Plan) { p.Steps = nil }), `steps "": no steps; expected percents, e.g. 10,25,50`},
		{"decreasing", plan(func(p *Plan) { p.Steps = []int64{60, 40} }), `steps "60,40": percents must increase, e.g. 10,25,50`},
		{"over 100", plan(func(p *Plan) { p.Steps = []int64{50, 101} }), `steps "50,101": 101 is not a percent from 1 to 100`},
		{"short interval", plan(func(p *Plan) { p.Interval = time.Second }), `interval "1s": shorter than the 5s minimum`},
		{"zero thresholds", plan(func(p *Plan) { p.Thresholds = Thresholds{} }), `max-p99 0x: expected a ratio of at least 1, e.g. max-p99 1.5x`},
		{"no min requests", plan(func(p *Plan) { p.Thresholds.MinRequests = 0 }), `min-requests 0: expected a whole number of requests of at least 1, e.g. min-requests 50`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, errString(tt.plan.Validate())); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
		})
	}
}
