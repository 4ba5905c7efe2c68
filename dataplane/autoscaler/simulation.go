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
// starts at the initial scale, as Knative creates it.
func newSimulation(spec Spec, podStartDelay time.Duration) *simulation {
	s := &simulation{
		spec:    spec,
		decider: NewDecider(spec.Decider, simulationStart, 0),
		state:   NewState(simulationStart),
		pods:    &simulatedPods{startDelay: podStartDelay},
	}
	s.pods.scale(spec.Scaler.InitialScale, simulationStart)
	return s
}

// tick runs one autoscaling tick at now and reports the Deployment's
// replicas, the ready pods after it and whether the decider is panicking.
func (s *simulation) tick(now time.Time) (desired, ready int32, panicking bool) {
	s.decider.Scale(now, s.pods.ready(now))
	step := Reconcile(s.spec.Scaler, s.state, Observation{
		Now:       now,
		Decision:  s.decider.Status(),
		ReadyPods: s.pods.ready(now),
	})
	s.state = step.State
	if step.Apply {
		s.pods.scale(step.Want, now)
	}
	return s.pods.replicas(), s.pods.ready(now), s.decider.Status().InPanic
}
