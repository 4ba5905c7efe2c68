package resources

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"time"

	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// RolloutAnnotation holds a Route's gradual rollout state, in its
// status.annotations, as JSON in Knative's format (Knative keeps it on
// the Route's KIngress, which knit has none of).
const RolloutAnnotation = "serving.knative.dev/rollout"

// Rollout is how far each Configuration a Route follows has moved to its
// latest ready Revision. With a rollout duration set it is kept between
// reconciles: a new latest ready Revision starts at 1% of its target's
// share and takes the rest in steps, the older ones drained newest first.
type Rollout struct {
	// Configurations are sorted by tag, then name.
	Configurations []ConfigurationRollout `json:"configurations,omitempty"`
}

// ConfigurationRollout is one target's split across the Revisions of
// the Configuration it follows.
type ConfigurationRollout struct {
	ConfigurationName string `json:"configurationName"`
	// Tag is always "" in knit, which rolls out untagged targets only;
	// it is kept so state Knative wrote reads back the same.
	Tag string `json:"tag,omitempty"`
	// Percent is the target's share of the Route's traffic, which
	// Revisions' percents add up to.
	Percent int `json:"percent"`
	// Revisions, oldest first; the last is the latest ready one. One
	// entry means no rollout is under way.
	Revisions []RevisionRollout `json:"revisions,omitempty"`
	// StepParams time the steps; zero when no rollout is under way.
	StepParams RolloutParams `json:"stepParams"`
}

// RolloutParams are a rollout's timing, Unix nanoseconds and
// nanoseconds. StepDuration and StepSize stay 0 until the ingress first
// serves the 1% split (ObserveReady).
type RolloutParams struct {
	StartTime    int64 `json:"starttime,omitempty"`
	NextStepTime int64 `json:"nextStepTime,omitempty"`
	StepDuration int64 `json:"stepDuration,omitempty"`
	StepSize     int   `json:"stepSize,omitempty"`
}

// RevisionRollout is one Revision's share of the Route's traffic (not of
// its target's).
type RevisionRollout struct {
	RevisionName string `json:"revisionName"`
	Percent      int    `json:"percent"`
}

// BuildRollout is the split resolved traffic asks for without a
// rollout: each untagged target following a Configuration sends its whole
// share to the latest ready Revision. spec and resolved are parallel, as
// ResolveTraffic returns them. Tagged targets move at once: their tag's
// host routes to one Revision. A Configuration two untagged targets
// follow moves at once too, as no single share describes it.
func BuildRollout(spec, resolved []servingv1.TrafficTarget) *Rollout {
	seen := map[string]int{}
	for _, t := range spec {
		if t.Tag == "" && followsConfiguration(t) {
			seen[t.ConfigurationName]++
		}
	}
	ro := &Rollout{}
	for i, t := range spec {
		if i >= len(resolved) || t.Tag != "" || !followsConfiguration(t) || seen[t.ConfigurationName] != 1 {
			continue
		}
		pct := int(ptr.Deref(resolved[i].Percent, 0))
		ro.Configurations = append(ro.Configurations, ConfigurationRollout{
			ConfigurationName: t.ConfigurationName,
			Percent:           pct,
			Revisions:         []RevisionRollout{{RevisionName: resolved[i].RevisionName, Percent: pct}},
		})
	}
	ro.sort()
	return ro
}

// ServedRollout is the split the Route's status traffic serves when no
// rollout is under way, as a state to step from: status traffic that
// matches spec target by target (as resolved traffic does) gives each
// untagged target following a Configuration its served Revision. Status
// that does not match (a changed spec, a split mid-rollout) gives nil, so
// the spec's traffic is taken at once. This is why the state need not be
// kept once a rollout is done.
func ServedRollout(spec, status []servingv1.TrafficTarget) *Rollout {
	if len(spec) != len(status) {
		return nil
	}
	for i, t := range spec {
		s := status[i]
		if s.Tag != t.Tag || ptr.Deref(s.Percent, 0) != ptr.Deref(t.Percent, 0) || s.RevisionName == "" ||
			ptr.Deref(s.LatestRevision, false) != followsConfiguration(t) ||
			(!followsConfiguration(t) && s.RevisionName != t.RevisionName) {
			return nil
		}
	}
	return BuildRollout(spec, status)
}

func (ro *Rollout) sort() {
	slices.SortFunc(ro.Configurations, func(a, b ConfigurationRollout) int {
		return cmp.Or(cmp.Compare(a.Tag, b.Tag), cmp.Compare(a.ConfigurationName, b.ConfigurationName))
	})
}

// ParseRollout reads RolloutAnnotation's value. Users can edit status,
// so anything that is not a consistent state is nil: the Route then
// starts again from its spec, as with no state at all.
func ParseRollout(s string) *Rollout {
	if s == "" {
		return nil
	}
	ro := &Rollout{}
	if err := json.Unmarshal([]byte(s), ro); err != nil || !ro.valid() {
		return nil
	}
	ro.sort()
	return ro
}

// valid says whether every configuration's percents add up, its step
// fits in its share, and no name repeats where it keys the state.
func (ro *Rollout) valid() bool {
	configs := map[[2]string]bool{}
	for _, c := range ro.Configurations {
		key := [2]string{c.Tag, c.ConfigurationName}
		if c.ConfigurationName == "" || configs[key] || c.Percent < 0 || c.Percent > 100 {
			return false
		}
		configs[key] = true
		p := c.StepParams
		if p.StepSize < 0 || p.StepSize > c.Percent || !inRange(p.StepDuration) || !inRange(p.StartTime) || !inRange(p.NextStepTime) {
			return false
		}
		sum, revs := 0, map[string]bool{}
		for _, r := range c.Revisions {
			if r.RevisionName == "" || revs[r.RevisionName] || r.Percent < 0 || r.Percent > 100 {
				return false
			}
			revs[r.RevisionName] = true
			sum += r.Percent
		}
		if sum != c.Percent {
			return false
		}
	}
	return true
}

// inRange says whether a time in the state is one a clock could give:
// not negative, and far enough from overflow that adding a step to it
// cannot wrap.
func inRange(ns int64) bool { return ns >= 0 && ns <= math.MaxInt64/4 }

// Encode is RolloutAnnotation's value for ro.
func (ro *Rollout) Encode() string {
	b, err := json.Marshal(ro)
	if err != nil {
		panic(err) // plain structs of strings and numbers
	}
	return string(b)
}

// Done says whether no configuration is mid-rollout.
func (ro *Rollout) Done() bool {
	for _, c := range ro.Configurations {
		if len(c.Revisions) > 1 {
			return false
		}
	}
	return true
}

// NextStep is the Unix time in nanoseconds of the soonest step still to
// take, 0 when none is scheduled (no rollout, or one whose step timing
// waits for ObserveReady).
func (ro *Rollout) NextStep() int64 {
	var next int64
	for _, c := range ro.Configurations {
		if t := c.StepParams.NextStepTime; len(c.Revisions) > 1 && t > 0 && (next == 0 || t < next) {
			next = t
		}
	}
	return next
}

// Step moves cur, the split the spec asks for now (BuildRollout), on
// from prev, the state kept from the last reconcile, at now (Unix
// nanoseconds): a Configuration whose latest ready Revision changed
// starts a rollout at 1%; one mid-rollout takes its next step if it is
// due; one whose share changed keeps its split, the newest Revision
// taking a rise and the oldest ones giving up a fall. With no prev every
// target moves at once. Step does not change cur or prev.
func (cur *Rollout) Step(prev *Rollout, now int64) *Rollout {
	if prev == nil || len(prev.Configurations) == 0 {
		return cur.clone()
	}
	before := map[[2]string]ConfigurationRollout{}
	for _, c := range prev.Configurations {
		before[[2]string{c.Tag, c.ConfigurationName}] = c
	}
	out := &Rollout{}
	for _, goal := range cur.Configurations {
		old, ok := before[[2]string{goal.Tag, goal.ConfigurationName}]
		switch {
		case goal.Percent == 0:
			// A tag-only target takes no share to roll out.
		case !ok || goal.Percent == 1:
			// New to the Route, or a 1% share (an A/B test's): at once.
			out.Configurations = append(out.Configurations, goal.clone())
		default:
			out.Configurations = append(out.Configurations, stepConfiguration(goal, old.clone(), now))
		}
	}
	out.sort()
	return out
}

// ObserveReady gives the rollouts that started but have no step timing
// yet their steps, now that the ingress serves their 1% split: what that
// took (at least 1 s) is the shortest step interval, and the rest of
// duration is spread over steps at least that far apart.
func (ro *Rollout) ObserveReady(now int64, duration time.Duration) {
	for i := range ro.Configurations {
		c := &ro.Configurations[i]
		if c.StepParams.StepDuration != 0 || c.StepParams.StartTime <= 0 || len(c.Revisions) < 2 {
			continue
		}
		took := math.Ceil(time.Duration(now - c.StepParams.StartTime).Seconds())
		c.planSteps(now, math.Max(1, took), duration.Seconds())
	}
}

// planSteps sets step size and interval for moving the remaining share
// (all but the 1% already moved) within durationSecs, the time the first
// step took (minStepSecs) counted as spent.
func (c *ConfigurationRollout) planSteps(now int64, minStepSecs, durationSecs float64) {
	left := math.Max(1, durationSecs-minStepSecs)
	steps := math.Max(1, left/minStepSecs)
	remaining := float64(c.Percent - 1)
	steps = math.Max(1, math.Min(steps, remaining))
	// Equal steps, rounded to the nearest percent: rounding down would
	// stretch 1.9 steps' worth of traffic per step into nearly twice the
	// time.
	size := int(math.Max(1, math.Round(remaining/steps)))
	interval := int64(left / steps * float64(time.Second))
	c.StepParams.StepSize = min(size, c.Percent)
	c.StepParams.StepDuration = interval
	c.StepParams.NextStepTime = now + interval
}

// stepConfiguration moves one configuration's split from old towards
// goal, whose single Revision is its latest ready one. old is a copy
// stepConfiguration may change.
func stepConfiguration(goal, old ConfigurationRollout, now int64) ConfigurationRollout {
	if len(old.Revisions) == 0 {
		return goal.clone()
	}
	old.resize(goal.Percent)
	newest := goal.Revisions[0].RevisionName
	if old.Revisions[len(old.Revisions)-1].RevisionName == newest {
		if len(old.Revisions) == 1 {
			return goal.clone()
		}
		if old.StepParams.StepSize > 0 {
			old.step(now)
		}
		return old
	}
	// A new latest ready Revision: it starts with 1%, taken from the
	// newest older Revision that has any, unless it had a share already
	// (a return to a Revision being drained), which it keeps.
	next := ConfigurationRollout{ConfigurationName: goal.ConfigurationName, Tag: goal.Tag, Percent: goal.Percent,
		StepParams: RolloutParams{StartTime: now}}
	start := 0
	if i := slices.IndexFunc(old.Revisions, func(r RevisionRollout) bool { return r.RevisionName == newest }); i >= 0 {
		start = old.Revisions[i].Percent
		old.Revisions = slices.Delete(old.Revisions, i, i+1)
	}
	if start == 0 {
		for i := len(old.Revisions) - 1; i >= 0; i-- {
			if old.Revisions[i].Percent > 0 {
				old.Revisions[i].Percent--
				start = 1
				break
			}
		}
	}
	for _, r := range old.Revisions {
		if r.Percent > 0 {
			next.Revisions = append(next.Revisions, r)
		}
	}
	next.Revisions = append(next.Revisions, RevisionRollout{RevisionName: newest, Percent: start})
	if len(next.Revisions) == 1 {
		next.StepParams = RolloutParams{}
	}
	return next
}

// resize fits c's split to a new share: a rise goes to the newest
// Revision, a fall comes out of the oldest ones first.
func (c *ConfigurationRollout) resize(percent int) {
	diff := percent - c.Percent
	c.Percent = percent
	switch {
	case diff > 0:
		c.Revisions[len(c.Revisions)-1].Percent += diff
	case diff < 0:
		cut := -diff
		for i := range c.Revisions {
			take := min(cut, c.Revisions[i].Percent)
			c.Revisions[i].Percent -= take
			cut -= take
		}
		c.Revisions = slices.DeleteFunc(c.Revisions, func(r RevisionRollout) bool { return r.Percent == 0 })
		if len(c.Revisions) == 0 {
			c.StepParams = RolloutParams{}
		}
	}
	if c.StepParams.StepSize > c.Percent {
		c.StepParams.StepSize = c.Percent
	}
}

// step moves StepSize more to the newest Revision if a step is due,
// draining the older ones newest first; a step further away than one
// interval (a hand-edited state) is due now. Done, the timing is cleared.
func (c *ConfigurationRollout) step(now int64) {
	p := c.StepParams
	if len(c.Revisions) < 2 || (now < p.NextStepTime && p.NextStepTime-now <= p.StepDuration) {
		return
	}
	last := len(c.Revisions) - 1
	moved := 0
	for i := last - 1; i >= 0 && moved < p.StepSize; i-- {
		take := min(c.Revisions[i].Percent, p.StepSize-moved)
		c.Revisions[i].Percent -= take
		moved += take
	}
	c.Revisions[last].Percent += moved
	c.Revisions = slices.DeleteFunc(c.Revisions, func(r RevisionRollout) bool { return r.Percent == 0 })
	if len(c.Revisions) < 2 {
		c.StepParams = RolloutParams{}
		return
	}
	c.StepParams.NextStepTime = now + p.StepDuration
}

func (ro *Rollout) clone() *Rollout {
	out := &Rollout{Configurations: make([]ConfigurationRollout, 0, len(ro.Configurations))}
	for _, c := range ro.Configurations {
		out.Configurations = append(out.Configurations, c.clone())
	}
	return out
}

func (c ConfigurationRollout) clone() ConfigurationRollout {
	c.Revisions = slices.Clone(c.Revisions)
	return c
}

// ApplyRollout splits each untagged target of resolved that follows a
// Configuration mid-rollout into one target per Revision of its split,
// oldest first, each marked latestRevision as Knative's status shows
// them; the ingress routes by these targets as by any others.
func ApplyRollout(spec, resolved []servingv1.TrafficTarget, ro *Rollout) []servingv1.TrafficTarget {
	if ro == nil || ro.Done() {
		return resolved
	}
	out := make([]servingv1.TrafficTarget, 0, len(resolved)+1)
	for i, t := range resolved {
		var split []RevisionRollout
		if i < len(spec) && spec[i].Tag == "" && followsConfiguration(spec[i]) {
			for _, c := range ro.Configurations {
				if c.Tag == "" && c.ConfigurationName == spec[i].ConfigurationName && len(c.Revisions) > 1 {
					split = c.Revisions
				}
			}
		}
		if split == nil {
			out = append(out, t)
			continue
		}
		for _, r := range split {
			out = append(out, servingv1.TrafficTarget{RevisionName: r.RevisionName, Percent: ptr.To(int64(r.Percent)), LatestRevision: ptr.To(true)})
		}
	}
	return out
}
