package canary

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// plan is DefaultPlan changed by mutate, so each case states only what it
// asks for.
func plan(mutate func(*Plan)) Plan {
	p := DefaultPlan()
	if mutate != nil {
		mutate(&p)
	}
	return p
}

func TestParseAnnotation(t *testing.T) {
	tests := []struct {
		name, in string
		want     Plan
		wantErr  string
	}{
		{"steps and interval", "10,25,50 every 2m", plan(nil), ""},
		{"steps alone keep the default interval", "5,50", plan(func(p *Plan) { p.Steps = []int64{5, 50} }), ""},
		{"interval alone keeps the default steps", "every 30s", plan(func(p *Plan) { p.Interval = 30 * time.Second }), ""},
		{"one step to all traffic", "100 every 1m", plan(func(p *Plan) { p.Steps, p.Interval = []int64{100}, time.Minute }), ""},
		{"case, spaces after commas and percent signs", "  10%, 25% ,50 EVERY 90S AutoMerge ",
			plan(func(p *Plan) { p.Interval, p.AutoMerge = 90*time.Second, true }), ""},
		{"words in any order", "automerge every 1m 20,40",
			plan(func(p *Plan) { p.Steps, p.Interval, p.AutoMerge = []int64{20, 40}, time.Minute, true }), ""},
		{"threshold overrides", "10,25,50 every 2m max-5xx 2 max-p99 1.5x min-requests 50",
			plan(func(p *Plan) {
				p.Thresholds.Max5xxPoints, p.Thresholds.MaxP99Ratio, p.Thresholds.MinRequests = 2, 1.5, 50
			}), ""},
		{"ratio without x, points with %, zero points", "10 every 5s max-p99 2 max-5xx 0%",
			plan(func(p *Plan) {
				p.Steps, p.Interval, p.Thresholds.MaxP99Ratio, p.Thresholds.Max5xxPoints = []int64{10}, 5*time.Second, 2, 0
			}), ""},
		{"ten steps", "1,2,3,4,5,6,7,8,9,10", plan(func(p *Plan) { p.Steps = []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} }), ""},

		{"empty", " ", Plan{}, `annotation knit.dev/canary is empty: expected steps and an interval, e.g. "10,25,50 every 2m"`},
		{"decreasing", "60,40 every 2m", Plan{}, `annotation knit.dev/canary "60,40 every 2m": steps "60,40": percents must increase, e.g. 10,25,50`},
		{"repeated step", "10,10", Plan{}, `annotation knit.dev/canary "10,10": steps "10,10": percents must increase, e.g. 10,25,50`},
		{"over 100", "50,150", Plan{}, `annotation knit.dev/canary "50,150": steps "50,150": "150" is not a percent from 1 to 100`},
		{"zero", "0,50", Plan{}, `annotation knit.dev/canary "0,50": steps "0,50": "0" is not a percent from 1 to 100`},
		{"not a number", "10,2x", Plan{}, `annotation knit.dev/canary "10,2x": steps "10,2x": "2x" is not a percent from 1 to 100`},
		{"empty step", "10,,50", Plan{}, `annotation knit.dev/canary "10,,50": steps "10,,50": an empty step; expected percents separated by commas, e.g. 10,25,50`},
		{"eleven steps", "1,2,3,4,5,6,7,8,9,10,11", Plan{},
			`annotation knit.dev/canary "1,2,3,4,5,6,7,8,9,10,11": steps "1,2,3,4,5,6,7,8,9,10,11": 11 steps, at most 10`},
		{"two step lists", "10,20 every 1m 30", Plan{}, `annotation knit.dev/canary "10,20 every 1m 30": steps "30": "steps" given twice`},
		{"interval without unit", "10,25,50 every 2", Plan{}, `annotation knit.dev/canary "10,25,50 every 2": interval "2" needs a unit, e.g. 2m`},
		{"interval not a duration", "10 every soon", Plan{}, `annotation knit.dev/canary "10 every soon": interval "soon": expected a duration such as 30s, 2m or 1h`},
		{"interval too short", "10 every 2s", Plan{}, `annotation knit.dev/canary "10 every 2s": interval "2s": shorter than the 5s minimum`},
		{"every without value", "10,25 every", Plan{}, `annotation knit.dev/canary "10,25 every": "every" needs a value: e.g. every 2m`},
		{"every twice", "every 1m every 2m", Plan{}, `annotation knit.dev/canary "every 1m every 2m": "every" given twice`},
		{"unknown word", "10,25 fast", Plan{}, `annotation knit.dev/canary "10,25 fast": unexpected "fast": ` + expectedWords},
		{"points over 100", "10 max-5xx 120", Plan{}, `annotation knit.dev/canary "10 max-5xx 120": max-5xx "120": expected percentage points from 0 to 100, e.g. max-5xx 2`},
		{"points NaN", "10 max-5xx nan", Plan{}, `annotation knit.dev/canary "10 max-5xx nan": max-5xx "nan": expected percentage points from 0 to 100, e.g. max-5xx 2`},
		{"ratio below 1", "10 max-p99 0.8x", Plan{}, `annotation knit.dev/canary "10 max-p99 0.8x": max-p99 "0.8x": expected a ratio of at least 1, e.g. max-p99 1.5x`},
		{"ratio without value", "10 max-p99", Plan{}, `annotation knit.dev/canary "10 max-p99": "max-p99" needs a value: e.g. max-p99 1.5x (ratio to stable)`},
		{"min-requests zero", "10 min-requests 0", Plan{}, `annotation knit.dev/canary "10 min-requests 0": min-requests "0": expected a whole number of requests of at least 1, e.g. min-requests 50`},
		{"min-requests fraction", "10 min-requests 2.5", Plan{}, `annotation knit.dev/canary "10 min-requests 2.5": min-requests "2.5": expected a whole number of requests of at least 1, e.g. min-requests 50`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAnnotation(tt.in)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestParseDescription(t *testing.T) {
	tests := []struct {
		name, body string
		want       Plan
		wantOK     bool
		wantErr    string
	}{
		{"no description", "", Plan{}, false, ""},
		{"prose only", "Speeds up checkout.\n\nknit is great; canary birds too.", Plan{}, false, ""},
		{"the issue's example", "Speeds up checkout.\n\nknit: canary 10,25,50 every 2m\n", plan(nil), true, ""},
		{"automerge, CRLF, indentation and case", "Speeds up checkout.\r\n  KNIT: Canary 10,25,50 every 2m automerge\r\nThanks",
			plan(func(p *Plan) { p.AutoMerge = true }), true, ""},
		{"bare line asks for the defaults", "knit: canary", plan(nil), true, ""},
		{"no space after the colon, a colon after canary", "knit:canary: 5,50 every 30s",
			plan(func(p *Plan) { p.Steps, p.Interval = []int64{5, 50}, 30*time.Second }), true, ""},
		{"first matching line wins", "knit: canary 5 every 1m\nknit: canary 60,40",
			plan(func(p *Plan) { p.Steps, p.Interval = []int64{5}, time.Minute }), true, ""},
		{"a malformed first line is reported, not skipped", "knit: canary 60,40\nknit: canary 5 every 1m", Plan{}, true,
			`PR description line "knit: canary 60,40": steps "60,40": percents must increase, e.g. 10,25,50`},
		{"another word after the prefix is not a request", "knit: canaryish 10", Plan{}, false, ""},
		{"the prefix in the middle of a line is prose", "Do not add knit: canary 10 yet", Plan{}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := ParseDescription(tt.body)
			if ok != tt.wantOK {
				t.Errorf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLabels(t *testing.T) {
	tests := []struct {
		name    string
		labels  []string
		want    Plan
		wantOK  bool
		wantErr string
	}{
		{"no labels", nil, Plan{}, false, ""},
		{"other labels", []string{"bug", "knit/preview", "knit/canary-beta"}, Plan{}, false, ""},
		{"bare label: defaults", []string{"bug", "knit/canary"}, plan(nil), true, ""},
		{"label with a spec", []string{"knit/canary: 5,50 every 30s"},
			plan(func(p *Plan) { p.Steps, p.Interval = []int64{5, 50}, 30*time.Second }), true, ""},
		{"case and spaces", []string{" Knit/Canary : 5,50 every 30s automerge"},
			plan(func(p *Plan) { p.Steps, p.Interval, p.AutoMerge = []int64{5, 50}, 30*time.Second, true }), true, ""},
		{"the same label twice", []string{"knit/canary", "KNIT/CANARY"}, plan(nil), true, ""},
		{"two different canary labels", []string{"knit/canary: 5,50", "knit/canary"}, Plan{}, true,
			`labels "knit/canary: 5,50" and "knit/canary": more than one canary label; keep one`},
		{"malformed spec", []string{"knit/canary: 5,50 every 1"}, Plan{}, true,
			`label "knit/canary: 5,50 every 1": interval "1" needs a unit, e.g. 1m`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := ParseLabels(tt.labels)
			if ok != tt.wantOK {
				t.Errorf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	const (
		desc  = "Faster.\nknit: canary 5 every 1m"
		label = "knit/canary: 20,40 every 30s"
		annot = "50 every 10m"
	)
	fromDesc := plan(func(p *Plan) { p.Steps, p.Interval = []int64{5}, time.Minute })
	fromLabel := plan(func(p *Plan) { p.Steps, p.Interval = []int64{20, 40}, 30*time.Second })
	fromAnnot := plan(func(p *Plan) { p.Steps, p.Interval = []int64{50}, 10*time.Minute })
	tests := []struct {
		name        string
		description string
		labels      []string
		annotation  string
		want        Plan
		wantSource  Source
		wantErr     string
	}{
		{"nothing asks", "Faster.", []string{"bug"}, "", Plan{}, SourceNone, ""},
		{"description over label and annotation", desc, []string{label}, annot, fromDesc, SourceDescription, ""},
		{"label over annotation", "Faster.", []string{label}, annot, fromLabel, SourceLabel, ""},
		{"annotation alone", "", nil, annot, fromAnnot, SourceAnnotation, ""},
		{"a malformed description does not fall back", "knit: canary 5 every 1", []string{label}, annot, Plan{}, SourceDescription,
			`PR description line "knit: canary 5 every 1": interval "1" needs a unit, e.g. 1m`},
		{"a malformed label does not fall back", "", []string{"knit/canary: 0"}, annot, Plan{}, SourceLabel,
			`label "knit/canary: 0": steps "0": "0" is not a percent from 1 to 100`},
		{"a malformed annotation is reported", "", nil, "every", Plan{}, SourceAnnotation,
			`annotation knit.dev/canary "every": "every" needs a value: e.g. every 2m`},
		{"lower sources are not parsed once one wins", desc, []string{"knit/canary: 0"}, "every", fromDesc, SourceDescription, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, source, err := Resolve(tt.description, tt.labels, tt.annotation)
			if source != tt.wantSource {
				t.Errorf("source = %q, want %q", source, tt.wantSource)
			}
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
