package resources

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

const sec = int64(time.Second)

// cfgRollout is the state of Configuration "hello" at percent with
// these Revisions ("name", percent pairs) and timing.
func cfgRollout(percent int, p RolloutParams, revs ...any) ConfigurationRollout {
	c := ConfigurationRollout{ConfigurationName: "hello", Percent: percent, StepParams: p}
	for i := 0; i < len(revs); i += 2 {
		c.Revisions = append(c.Revisions, RevisionRollout{RevisionName: revs[i].(string), Percent: revs[i+1].(int)})
	}
	return c
}

func rollout(cs ...ConfigurationRollout) *Rollout { return &Rollout{Configurations: cs} }

func TestRolloutStep(t *testing.T) {
	const now = 1000 * sec
	tests := []struct {
		name     string
		cur      *Rollout
		prev     *Rollout
		want     *Rollout
		wantNext int64
	}{{
		name: "no previous state: the new Revision takes the whole share",
		cur:  rollout(cfgRollout(100, RolloutParams{}, "hello-2", 100)),
		want: rollout(cfgRollout(100, RolloutParams{}, "hello-2", 100)),
	}, {
		name: "same Revision, nothing under way",
		cur:  rollout(cfgRollout(100, RolloutParams{}, "hello-1", 100)),
		prev: rollout(cfgRollout(100, RolloutParams{}, "hello-1", 100)),
		want: rollout(cfgRollout(100, RolloutParams{}, "hello-1", 100)),
	}, {
		name: "a new Revision starts at 1%, untimed until the ingress serves it",
		cur:  rollout(cfgRollout(100, RolloutParams{}, "hello-2", 100)),
		prev: rollout(cfgRollout(100, RolloutParams{}, "hello-1", 100)),
		want: rollout(cfgRollout(100, RolloutParams{StartTime: now}, "hello-1", 99, "hello-2", 1)),
	}, {
		name: "untimed rollout waits",
		cur:  rollout(cfgRollout(100, RolloutParams{}, "hello-2", 100)),
		prev: rollout(cfgRollout(100, RolloutParams{StartTime: now - sec}, "hello-1", 99, "hello-2", 1)),
		want: rollout(cfgRollout(100, RolloutParams{StartTime: now - sec}, "hello-1", 99, "hello-2", 1)),
	}, {
		name:     "step not due yet",
		cur:      rollout(cfgRollout(100, RolloutParams{}, "hello-2", 100)),
		prev:     rollout(cfgRollout(100, RolloutParams{StartTime: 1, StepSize: 33, StepDuration: sec, NextStepTime: now + 1}, "hello-1", 99, "hello-2", 1)),
		want:     rollout(cfgRollout(100, RolloutParams{StartTime: 1, StepSize: 33, StepDuration: sec, NextStepTime: now + 1}, "hello-1", 99, "hello-2", 1)),
		wantNext: now + 1,
	}, {
		name:     "a due step moves StepSize",
		cur:      rollout(cfgRollout(100, RolloutParams{}, "hello-2", 100)),
		prev:     rollout(cfgRollout(100, RolloutParams{StartTime: 1, StepSize: 33, StepDuration: sec, NextStepTime: now}, "hello-1", 99, "hello-2", 1)),
		want:     rollout(cfgRollout(100, RolloutParams{StartTime: 1, StepSize: 33, StepDuration: sec, NextStepTime: now + sec}, "hello-1", 66, "hello-2", 34)),
		wantNext: now + sec,
	}, {
		name: "the last step completes the rollout and clears its timing",
		cur:  rollout(cfgRollout(100, RolloutParams{}, "hello-2", 100)),
		prev: rollout(cfgRollout(100, RolloutParams{StartTime: 1, StepSize: 33, StepDuration: sec, NextStepTime: now}, "hello-1", 33, "hello-2", 67)),
		want: rollout(cfgRollout(100, RolloutParams{}, "hello-2", 100)),
	}, {
		name:     "a step drains the newest older Revision first",
		cur:      rollout(cfgRollout(100, RolloutParams{}, "hello-3", 100)),
		prev:     rollout(cfgRollout(100, RolloutParams{StartTime: 1, StepSize: 30, StepDuration: sec, NextStepTime: now}, "hello-1", 50, "hello-2", 20, "hello-3", 30)),
		want:     rollout(cfgRollout(100, RolloutParams{StartTime: 1, StepSize: 30, StepDuration: sec, NextStepTime: now + sec}, "hello-1", 40, "hello-3", 60)),
		wantNext: now + sec,
	}, {
		name: "a second new Revision mid-rollout starts its own from the current split",
		cur:  rollout(cfgRollout(100, RolloutParams{}, "hello-3", 100)),
		prev: rollout(cfgRollout(100, RolloutParams{StartTime: 1, StepSize: 33, StepDuration: sec, NextStepTime: now + sec}, "hello-1", 66, "hello-2", 34)),
		want: rollout(cfgRollout(100, RolloutParams{StartTime: now}, "hello-1", 66, "hello-2", 33, "hello-3", 1)),
	}, {
		name: "the 1% comes from the newest older Revision that has traffic",
		cur:  rollout(cfgRollout(100, RolloutParams{}, "hello-3", 100)),
		prev: rollout(cfgRollout(100, RolloutParams{StartTime: 1}, "hello-1", 99, "hello-2", 1)),
		want: rollout(cfgRollout(100, RolloutParams{StartTime: now}, "hello-1", 99, "hello-3", 1)),
	}, {
		name: "returning to a Revision being drained keeps its share",
		cur:  rollout(cfgRollout(100, RolloutParams{}, "hello-1", 100)),
		prev: rollout(cfgRollout(100, RolloutParams{StartTime: 1, StepSize: 33, StepDuration: sec, NextStepTime: now + sec}, "hello-1", 66, "hello-2", 34)),
		want: rollout(cfgRollout(100, RolloutParams{StartTime: now}, "hello-2", 34, "hello-1", 66)),
	}, {
		name:     "target percent rises mid-rollout: the newest Revision takes the rise",
		cur:      rollout(cfgRollout(80, RolloutParams{}, "hello-2", 80)),
		prev:     rollout(cfgRollout(50, RolloutParams{StartTime: 1, StepSize: 10, StepDuration: sec, NextStepTime: now + sec}, "hello-1", 40, "hello-2", 10)),
		want:     rollout(cfgRollout(80, RolloutParams{StartTime: 1, StepSize: 10, StepDuration: sec, NextStepTime: now + sec}, "hello-1", 40, "hello-2", 40)),
		wantNext: now + sec,
	}, {
		name:     "target percent falls mid-rollout: the oldest Revisions give it up",
		cur:      rollout(cfgRollout(15, RolloutParams{}, "hello-3", 15)),
		prev:     rollout(cfgRollout(60, RolloutParams{StartTime: 1, StepSize: 10, StepDuration: sec, NextStepTime: now + sec}, "hello-1", 40, "hello-2", 10, "hello-3", 10)),
		want:     rollout(cfgRollout(15, RolloutParams{StartTime: 1, StepSize: 10, StepDuration: sec, NextStepTime: now + sec}, "hello-2", 5, "hello-3", 10)),
		wantNext: now + sec,
	}, {
		name: "a fall that leaves only the newest Revision ends the rollout",
		cur:  rollout(cfgRollout(10, RolloutParams{}, "hello-2", 10)),
		prev: rollout(cfgRollout(60, RolloutParams{StartTime: 1, StepSize: 10, StepDuration: sec, NextStepTime: now + sec}, "hello-1", 40, "hello-2", 20)),
		want: rollout(cfgRollout(10, RolloutParams{}, "hello-2", 10)),
	}, {
		name: "a tag-only target (0%) takes no part",
		cur:  rollout(cfgRollout(0, RolloutParams{}, "hello-2", 0)),
		prev: rollout(cfgRollout(100, RolloutParams{}, "hello-1", 100)),
		want: rollout(),
	}, {
		name: "a 1% target moves at once",
		cur:  rollout(cfgRollout(1, RolloutParams{}, "hello-2", 1)),
		prev: rollout(cfgRollout(1, RolloutParams{}, "hello-1", 1)),
		want: rollout(cfgRollout(1, RolloutParams{}, "hello-2", 1)),
	}, {
		name: "a Configuration new to the Route moves at once, one gone is dropped",
		cur: rollout(
			ConfigurationRollout{ConfigurationName: "world", Percent: 50, Revisions: []RevisionRollout{{RevisionName: "world-1", Percent: 50}}},
			cfgRollout(50, RolloutParams{}, "hello-2", 50)),
		prev: rollout(
			ConfigurationRollout{ConfigurationName: "gone", Percent: 50, Revisions: []RevisionRollout{{RevisionName: "gone-1", Percent: 50}}},
			cfgRollout(50, RolloutParams{}, "hello-1", 50)),
		want: rollout(
			cfgRollout(50, RolloutParams{StartTime: now}, "hello-1", 49, "hello-2", 1),
			ConfigurationRollout{ConfigurationName: "world", Percent: 50, Revisions: []RevisionRollout{{RevisionName: "world-1", Percent: 50}}}),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var prevCopy *Rollout
			if tc.prev != nil {
				prevCopy = tc.prev.clone()
			}
			got := tc.cur.Step(tc.prev, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Step (-want +got):\n%s", diff)
			}
			if got := got.NextStep(); got != tc.wantNext {
				t.Errorf("NextStep = %d, want %d", got, tc.wantNext)
			}
			if !got.valid() {
				t.Errorf("Step made an inconsistent state: %+v", got)
			}
			if tc.prev != nil && !cmp.Equal(prevCopy, tc.prev) {
				t.Errorf("Step changed prev: %s", cmp.Diff(prevCopy, tc.prev))
			}
		})
	}
}

func TestRolloutObserveReady(t *testing.T) {
	const now = 1000 * sec
	tests := []struct {
		name     string
		in       ConfigurationRollout
		duration time.Duration
		want     RolloutParams
	}{{
		name:     "ready within a second: 99% over the remaining 3 s in 3 steps",
		in:       cfgRollout(100, RolloutParams{StartTime: now - sec/2}, "hello-1", 99, "hello-2", 1),
		duration: 4 * time.Second,
		want:     RolloutParams{StartTime: now - sec/2, StepSize: 33, StepDuration: sec, NextStepTime: now + sec},
	}, {
		name:     "slow ingress: steps no closer than it took",
		in:       cfgRollout(100, RolloutParams{StartTime: now - 3*sec}, "hello-1", 99, "hello-2", 1),
		duration: 120 * time.Second,
		want:     RolloutParams{StartTime: now - 3*sec, StepSize: 3, StepDuration: 3 * sec, NextStepTime: now + 3*sec},
	}, {
		name:     "long duration: 1% steps",
		in:       cfgRollout(100, RolloutParams{StartTime: now - sec}, "hello-1", 99, "hello-2", 1),
		duration: 1000 * time.Second,
		want:     RolloutParams{StartTime: now - sec, StepSize: 1, StepDuration: 10090909090, NextStepTime: now + 10090909090},
	}, {
		name:     "slower than the duration: one step",
		in:       cfgRollout(100, RolloutParams{StartTime: now - 10*sec}, "hello-1", 99, "hello-2", 1),
		duration: 4 * time.Second,
		want:     RolloutParams{StartTime: now - 10*sec, StepSize: 99, StepDuration: sec, NextStepTime: now + sec},
	}, {
		name:     "already timed: unchanged",
		in:       cfgRollout(100, RolloutParams{StartTime: 1, StepSize: 5, StepDuration: 7, NextStepTime: 9}, "hello-1", 99, "hello-2", 1),
		duration: 4 * time.Second,
		want:     RolloutParams{StartTime: 1, StepSize: 5, StepDuration: 7, NextStepTime: 9},
	}, {
		name:     "no rollout: unchanged",
		in:       cfgRollout(100, RolloutParams{}, "hello-2", 100),
		duration: 4 * time.Second,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ro := rollout(tc.in)
			ro.ObserveReady(now, tc.duration)
			if diff := cmp.Diff(tc.want, ro.Configurations[0].StepParams); diff != "" {
				t.Errorf("ObserveReady (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRolloutOverTime drives a 4 s rollout reconcile by reconcile, the
// way the Route controller does, to its end.
func TestRolloutOverTime(t *testing.T) {
	now := 1000 * sec
	state := rollout(cfgRollout(100, RolloutParams{}, "hello-1", 100))
	cur := rollout(cfgRollout(100, RolloutParams{}, "hello-2", 100))
	var splits [][]RevisionRollout
	for i := 0; i < 20 && (i == 0 || !state.Done()); i++ {
		state = cur.Step(state, now)
		if i > 0 { // the ingress serves the 1% split from the second pass on
			state.ObserveReady(now, 4*time.Second)
		}
		splits = append(splits, state.Configurations[0].Revisions)
		if next := state.NextStep(); next > 0 {
			now = next
		} else {
			now += sec / 10
		}
	}
	want := [][]RevisionRollout{
		{{"hello-1", 99}, {"hello-2", 1}},
		{{"hello-1", 99}, {"hello-2", 1}},
		{{"hello-1", 66}, {"hello-2", 34}},
		{{"hello-1", 33}, {"hello-2", 67}},
		{{"hello-2", 100}},
	}
	if diff := cmp.Diff(want, splits); diff != "" {
		t.Errorf("splits (-want +got):\n%s", diff)
	}
	if got := state.Configurations[0].StepParams; got != (RolloutParams{}) {
		t.Errorf("finished rollout kept timing %+v", got)
	}
}

func TestParseRollout(t *testing.T) {
	good := rollout(cfgRollout(100, RolloutParams{StartTime: 5, StepSize: 10, StepDuration: sec, NextStepTime: 7}, "hello-1", 60, "hello-2", 40))
	if got := ParseRollout(good.Encode()); !cmp.Equal(got, good) {
		t.Errorf("round trip: %s", cmp.Diff(good, got))
	}
	knative := `{"configurations":[{"configurationName":"hello","percent":100,"revisions":[{"revisionName":"hello-1","percent":99},{"revisionName":"hello-2","percent":1}],"stepParams":{"starttime":42}}]}`
	if got := ParseRollout(knative); got == nil || got.Configurations[0].StepParams.StartTime != 42 {
		t.Errorf("Knative's format: %+v", got)
	}
	for _, bad := range []string{
		``,
		`{`,
		`[]`,
		`{"configurations":[{"configurationName":"hello","percent":100,"revisions":[{"revisionName":"hello-1","percent":90}]}]}`,
		`{"configurations":[{"configurationName":"hello","percent":101,"revisions":[{"revisionName":"hello-1","percent":101}]}]}`,
		`{"configurations":[{"configurationName":"hello","percent":100,"revisions":[{"revisionName":"hello-1","percent":-5},{"revisionName":"hello-2","percent":105}]}]}`,
		`{"configurations":[{"configurationName":"hello","percent":10,"revisions":[{"revisionName":"hello-1","percent":10}],"stepParams":{"stepSize":11}}]}`,
		`{"configurations":[{"configurationName":"hello","percent":10,"revisions":[{"revisionName":"hello-1","percent":5},{"revisionName":"hello-1","percent":5}]}]}`,
		`{"configurations":[{"configurationName":"","percent":0}]}`,
		`{"configurations":[{"configurationName":"a","percent":0},{"configurationName":"a","percent":0}]}`,
		`{"configurations":[{"configurationName":"hello","percent":10,"revisions":[{"revisionName":"hello-1","percent":10}],"stepParams":{"stepDuration":-1}}]}`,
	} {
		if got := ParseRollout(bad); got != nil {
			t.Errorf("ParseRollout(%q) = %+v, want nil (discarded)", bad, got)
		}
	}
}

func TestBuildAndApplyRollout(t *testing.T) {
	spec := []servingv1.TrafficTarget{
		{ConfigurationName: "hello", LatestRevision: ptr.To(true), Percent: ptr.To[int64](80)},
		{ConfigurationName: "hello", Tag: "latest", LatestRevision: ptr.To(true), Percent: ptr.To[int64](0)},
		{RevisionName: "other-1", LatestRevision: ptr.To(false), Percent: ptr.To[int64](20)},
	}
	resolved := []servingv1.TrafficTarget{
		{RevisionName: "hello-2", LatestRevision: ptr.To(true), Percent: ptr.To[int64](80)},
		{RevisionName: "hello-2", Tag: "latest", LatestRevision: ptr.To(true), Percent: ptr.To[int64](0)},
		{RevisionName: "other-1", LatestRevision: ptr.To(false), Percent: ptr.To[int64](20)},
	}
	built := BuildRollout(spec, resolved)
	want := rollout(ConfigurationRollout{ConfigurationName: "hello", Percent: 80, Revisions: []RevisionRollout{{"hello-2", 80}}})
	if diff := cmp.Diff(want, built); diff != "" {
		t.Errorf("BuildRollout (-want +got):\n%s", diff)
	}
	if got := ApplyRollout(spec, resolved, built); !cmp.Equal(got, resolved) {
		t.Errorf("a finished rollout changed traffic: %s", cmp.Diff(resolved, got))
	}
	mid := rollout(ConfigurationRollout{ConfigurationName: "hello", Percent: 80, Revisions: []RevisionRollout{{"hello-1", 50}, {"hello-2", 30}}, StepParams: RolloutParams{StartTime: 1}})
	wantTraffic := []servingv1.TrafficTarget{
		{RevisionName: "hello-1", LatestRevision: ptr.To(true), Percent: ptr.To[int64](50)},
		{RevisionName: "hello-2", LatestRevision: ptr.To(true), Percent: ptr.To[int64](30)},
		resolved[1], resolved[2],
	}
	if diff := cmp.Diff(wantTraffic, ApplyRollout(spec, resolved, mid)); diff != "" {
		t.Errorf("ApplyRollout (-want +got):\n%s", diff)
	}
	twice := append(spec[:1:1], servingv1.TrafficTarget{ConfigurationName: "hello", Percent: ptr.To[int64](20)})
	if got := BuildRollout(twice, resolved[:2]); len(got.Configurations) != 0 {
		t.Errorf("a Configuration two untagged targets follow rolled out: %+v", got)
	}
}

func TestServedRollout(t *testing.T) {
	spec := []servingv1.TrafficTarget{
		{ConfigurationName: "hello", LatestRevision: ptr.To(true), Percent: ptr.To[int64](80)},
		{RevisionName: "other-1", LatestRevision: ptr.To(false), Percent: ptr.To[int64](20)},
	}
	served := []servingv1.TrafficTarget{
		{RevisionName: "hello-1", LatestRevision: ptr.To(true), Percent: ptr.To[int64](80)},
		{RevisionName: "other-1", LatestRevision: ptr.To(false), Percent: ptr.To[int64](20)},
	}
	want := rollout(ConfigurationRollout{ConfigurationName: "hello", Percent: 80, Revisions: []RevisionRollout{{"hello-1", 80}}})
	if diff := cmp.Diff(want, ServedRollout(spec, served)); diff != "" {
		t.Errorf("ServedRollout (-want +got):\n%s", diff)
	}
	for name, status := range map[string][]servingv1.TrafficTarget{
		"nothing served yet": nil,
		"a split mid-rollout": {
			{RevisionName: "hello-1", LatestRevision: ptr.To(true), Percent: ptr.To[int64](40)},
			{RevisionName: "hello-2", LatestRevision: ptr.To(true), Percent: ptr.To[int64](40)},
			served[1]},
		"another percent":                          {{RevisionName: "hello-1", LatestRevision: ptr.To(true), Percent: ptr.To[int64](70)}, served[1]},
		"another pinned Revision":                  {served[0], {RevisionName: "other-2", LatestRevision: ptr.To(false), Percent: ptr.To[int64](20)}},
		"a pinned Revision where the spec follows": {{RevisionName: "hello-1", LatestRevision: ptr.To(false), Percent: ptr.To[int64](80)}, served[1]},
	} {
		if got := ServedRollout(spec, status); got != nil {
			t.Errorf("%s: %+v, want nil", name, got)
		}
	}
}

// FuzzParseRollout: the annotation is read from status, which users can
// edit. Whatever it holds, parsing and stepping must not panic, and what
// parses must stay consistent through Step and ObserveReady.
func FuzzParseRollout(f *testing.F) {
	f.Add(rollout(cfgRollout(100, RolloutParams{StartTime: 5, StepSize: 10, StepDuration: sec, NextStepTime: 7}, "hello-1", 60, "hello-2", 40)).Encode(), "hello-3", 100, int64(10))
	f.Add(`{"configurations":[{"configurationName":"hello","percent":100,"revisions":[{"revisionName":"hello-1","percent":99},{"revisionName":"hello-2","percent":1}],"stepParams":{"starttime":42}}]}`, "hello-2", 50, int64(1e9))
	f.Add(`{}`, "x", 0, int64(0))
	f.Fuzz(func(t *testing.T, s, rev string, percent int, now int64) {
		ro := ParseRollout(s)
		if ro == nil {
			return
		}
		if !ro.valid() {
			t.Fatalf("ParseRollout accepted an inconsistent state: %q", s)
		}
		if again := ParseRollout(ro.Encode()); !cmp.Equal(again, ro) {
			t.Fatalf("round trip changed it: %s", cmp.Diff(ro, again))
		}
		if rev == "" || percent < 0 || percent > 100 || !inRange(now) {
			return
		}
		var cur Rollout
		for _, c := range ro.Configurations {
			cur.Configurations = append(cur.Configurations, ConfigurationRollout{ConfigurationName: c.ConfigurationName, Tag: c.Tag,
				Percent: percent, Revisions: []RevisionRollout{{RevisionName: rev, Percent: percent}}})
		}
		next := cur.Step(ro, now)
		next.ObserveReady(now, 4*time.Second)
		if !next.valid() {
			t.Fatalf("Step from %q made an inconsistent state: %+v", s, next)
		}
		for _, c := range next.Configurations {
			if n := len(c.Revisions); n > 0 && c.Revisions[n-1].RevisionName != rev {
				t.Fatalf("Step from %q: newest Revision %q, want %q", s, c.Revisions[n-1].RevisionName, rev)
			}
		}
	})
}
