package autoscaler

import "time"

// Observation is what one reconcile sees.
type Observation struct {
	Now time.Time
	// Decision is the decider's latest valid decision (Decider.Status), or
	// one with DesiredPodCount -1 before the first.
	Decision  Decision
	ReadyPods int32
}

// Step is what one reconcile decides.
type Step struct {
	// Want is the scale the revision should have after bounds and the
	// scale-to-zero rules; -1 when unknown (no metrics yet).
	Want int32
	// Apply says Want must be written to the Deployment's replicas; when
	// false the replicas stay as they are (e.g. while waiting out the grace
	// period).
	Apply bool
	State State
	// RequeueAfter, when positive, is when a rule waiting on time can next
	// change its answer; the live reconciler requeues itself then.
	RequeueAfter time.Duration
}

// Reconcile is one pass of Knative's KPA reconciler: bound the decider's
// recommendation by min/max (and initial) scale, apply the scale-to-zero
// rules, pick the ServerlessService mode and update the Active condition.
// It is pure: the caller supplies the clock and the state, and applies Step.
func Reconcile(spec ScalerSpec, st State, obs Observation) Step {
	step := Step{Want: obs.Decision.DesiredPodCount, State: st}
	// With no metrics yet, leave the scale alone unless the revision is
	// still activating (it must reach its initial or min scale).
	if step.Want >= 0 || st.Activity == Activating {
		step.Want = spec.bound(st, step.Want)
		step.Want, step.Apply, step.RequeueAfter = spec.scaleToZero(st, obs.Now, step.Want)
	}
	step.State.setMode(chooseMode(step.Want, st, obs), obs.Now)
	spec.updateActivity(&step.State, step.Want, obs.ReadyPods, obs.Now)
	return step
}

// bound applies min-scale (only while the revision is reachable), initial
// scale (until the revision first reached it) and max-scale (0: none).
func (spec ScalerSpec) bound(st State, want int32) int32 {
	lo, hi := spec.MinScale, spec.MaxScale
	if !spec.Reachable {
		lo = 0
	}
	if spec.InitialScale > 1 && !st.ScaleTargetInitialized {
		lo = max(lo, spec.InitialScale)
	}
	if want < lo {
		return lo
	}
	if hi != 0 && want > hi {
		return hi
	}
	return want
}

// chooseMode puts the activator in the path when the revision is (going) to
// zero, when its excess burst capacity is negative (always with TBC -1), or
// when no pod is ready to take traffic. Knative's KPA writes Serve in the
// last case and the SKS reconciler falls back to the activator; knit folds
// that fallback in here so ProxySince tells the truth.
func chooseMode(want int32, st State, obs Observation) SKSMode {
	if want == 0 || obs.Decision.ExcessBurstCapacity < 0 || want < 0 && st.Activity == Inactive || obs.ReadyPods == 0 {
		return SKSModeProxy
	}
	return SKSModeServe
}

// activeThreshold is how many ready pods make the revision Active: its
// min-scale, its initial scale until first reached, and at least one after.
func (spec ScalerSpec) activeThreshold(st State) int32 {
	lo := spec.MinScale
	if !spec.Reachable {
		lo = 0
	}
	if !st.ScaleTargetInitialized {
		return max(lo, spec.InitialScale)
	}
	return max(lo, 1)
}
