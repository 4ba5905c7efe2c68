package autoscaler

import "time"

// simulation is one revision's life in the simulator: a Decider and the KPA
// state as live, with simulatedPods in place of the Deployment.
type simulation struct {
	spec    Spec
	decider *Decider
	state   State
	pods    *simulatedPods
}

// newSimulation creates the revision at the simulated second 0: its Deployment
// starts at the initial scale, as Knative creates it, and the PodAutoscaler
// is reconciled once then, with no decision yet (its decider has just
// started and first ticks a tick interval later).
func newSimulation(spec Spec, podStartDelay time.Duration) *simulation {
	s := &simulation{
		spec:    spec,
		decider: NewDecider(spec.Decider, simulationStart, 0),
		state:   NewState(simulationStart),
		pods:    &simulatedPods{startDelay: podStartDelay},
	}
	s.pods.scale(spec.Scaler.InitialScale, simulationStart)
	s.reconcile(simulationStart)
	return s
}

// tick runs one autoscaling tick at now, the decider's decision and the
// reconcile it triggers, and reports the Deployment's replicas, the ready
// pods after it and whether the decider is panicking.
func (s *simulation) tick(now time.Time) (desired, ready int32, panicking bool) {
	s.decider.Scale(now, s.pods.ready(now))
	s.reconcile(now)
	return s.pods.replicas(), s.pods.ready(now), s.decider.Status().InPanic
}

// reconcile is one pass of the PodAutoscaler reconciler at now on the
// decider's latest decision.
func (s *simulation) reconcile(now time.Time) {
	step := Reconcile(s.spec.Scaler, s.state, Observation{
		Now:       now,
		Decision:  s.decider.Status(),
		ReadyPods: s.pods.ready(now),
	})
	s.state = step.State
	if step.Apply {
		s.pods.scale(step.Want, now)
	}
}
