package autoscaler

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// outcome is what the tests check of one reconcile.
type outcome struct {
	Second   int
	Want     int32
	Apply    bool
	Activity Activity
	Mode     SKSMode
	Replicas int32
}

// world drives Reconcile like the live reconciler, with pods that are ready
// as soon as they are requested.
type world struct {
	spec     ScalerSpec
	state    State
	replicas int32
}

func (w *world) reconcile(s int, d Decision) (outcome, Step) {
	step := Reconcile(w.spec, w.state, Observation{Now: at(s), Decision: d, ReadyPods: w.replicas})
	w.state = step.State
	if step.Apply {
		w.replicas = step.Want
	}
	return outcome{s, step.Want, step.Apply, step.State.Activity, step.State.Mode, w.replicas}, step
}

// serving is a revision that has served with one pod since second 0.
func serving(spec ScalerSpec, mode SKSMode) *world {
	st := State{Activity: Active, ActivitySince: at(0), ScaleTargetInitialized: true, Mode: mode}
	if mode == SKSModeProxy {
		st.ProxySince = at(0)
	}
	return &world{spec: spec, state: st, replicas: 1}
}

// idleFrom feeds a decision of one pod until second idle and of zero after,
// and returns the outcomes at the given seconds.
func idleFrom(w *world, idle, until int, ebc int32, seconds ...int) []outcome {
	var got []outcome
	for s := 0; s <= until; s += 2 {
		d := Decision{DesiredPodCount: 1, ExcessBurstCapacity: ebc, Valid: true}
		if s >= idle {
			d.DesiredPodCount = 0
		}
		o, _ := w.reconcile(s, d)
		for _, want := range seconds {
			if want == s {
				got = append(got, o)
			}
		}
	}
	return got
}

func TestReconcileIdleToZero(t *testing.T) {
	spec := defaultSpec().Scaler
	tbc0 := spec
	tbc0.TargetBurstCapacity = 0
	retention := spec
	retention.ScaleToZeroPodRetentionPeriod = 60 * time.Second
	for _, tc := range []struct {
		name    string
		world   *world
		ebc     int32
		seconds []int
		want    []outcome
	}{{
		// TBC 0: the activator only joins when the revision turns idle, so
		// the grace period runs from then.
		name: "tbc 0 waits the grace period in proxy mode", world: serving(tbc0, SKSModeServe), ebc: 0,
		seconds: []int{98, 100, 102, 128, 130},
		want: []outcome{
			{98, 1, true, Active, SKSModeServe, 1},
			{100, 0, false, Inactive, SKSModeProxy, 1},
			{102, 0, false, Inactive, SKSModeProxy, 1},
			{128, 0, false, Inactive, SKSModeProxy, 1},
			{130, 0, true, Inactive, SKSModeProxy, 0},
		},
	}, {
		// TBC 211 with one pod: the activator has been in the path all along.
		name: "tbc 211 is already proxied", world: serving(spec, SKSModeProxy), ebc: -111,
		seconds: []int{100, 102},
		want: []outcome{
			{100, 0, false, Inactive, SKSModeProxy, 1},
			{102, 0, true, Inactive, SKSModeProxy, 0},
		},
	}, {
		name: "pod retention keeps the last pod", world: serving(retention, SKSModeProxy), ebc: -111,
		seconds: []int{102, 158, 160},
		want: []outcome{
			{102, 0, false, Inactive, SKSModeProxy, 1},
			{158, 0, false, Inactive, SKSModeProxy, 1},
			{160, 0, true, Inactive, SKSModeProxy, 0},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := idleFrom(tc.world, 100, 160, tc.ebc, tc.seconds...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReconcileScaleToZeroRules(t *testing.T) {
	spec := defaultSpec().Scaler
	zero := Decision{DesiredPodCount: 0, ExcessBurstCapacity: -111, Valid: true}

	disabled := spec
	disabled.EnableScaleToZero = false
	w := serving(disabled, SKSModeProxy)
	if o, _ := w.reconcile(500, zero); o != (outcome{500, 1, true, Active, SKSModeProxy, 1}) {
		t.Errorf("scale to zero disabled: %+v", o)
	}

	// Active for less than a stable window: keep one pod, come back later.
	w = serving(spec, SKSModeProxy)
	w.state.ActivitySince = at(90)
	o, step := w.reconcile(100, zero)
	if diff := cmp.Diff(outcome{100, 1, true, Active, SKSModeProxy, 1}, o); diff != "" {
		t.Errorf("recently active (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(50*time.Second, step.RequeueAfter); diff != "" {
		t.Errorf("requeue (-want +got):\n%s", diff)
	}

	// Just turned inactive but still served directly (TBC 0): wait for the
	// activator to be in the path, then until the revision has been inactive
	// (or proxied) for the grace period.
	w = &world{spec: spec, replicas: 1, state: State{Activity: Inactive, ActivitySince: at(195), ScaleTargetInitialized: true, Mode: SKSModeServe}}
	idle := Decision{DesiredPodCount: 0, ExcessBurstCapacity: 0, Valid: true}
	o, step = w.reconcile(200, idle)
	if diff := cmp.Diff(outcome{200, 0, false, Inactive, SKSModeProxy, 1}, o); diff != "" || step.RequeueAfter != time.Second {
		t.Errorf("not yet proxied (-want +got):\n%s requeue %v", diff, step.RequeueAfter)
	}
	if o, step = w.reconcile(224, idle); o.Apply || step.RequeueAfter != 6*time.Second {
		t.Errorf("scaled to zero 29s after turning inactive: %+v, requeue %v", o, step.RequeueAfter)
	}
	if o, _ = w.reconcile(226, idle); !o.Apply || o.Replicas != 0 {
		t.Errorf("not at zero a grace period after turning inactive: %+v", o)
	}
}

// TestReconcileActivationTimeout is Knative's rule for a revision whose pods
// never become ready: it stays Activating (scale unknown, the Deployment left
// alone) until it has been Activating for longer than the activation timeout
// (the progress deadline, 600s, plus 30s), strictly longer as Knative's
// PodAutoscalerStatus.CanFailActivation (>), and is then scaled to zero.
func TestReconcileActivationTimeout(t *testing.T) {
	spec := defaultSpec().Scaler
	for _, tc := range []struct {
		name      string
		after     time.Duration // Activating for
		want      int32
		apply     bool
		activity  Activity
		requeueIn time.Duration
	}{
		{"a tick before the timeout", 628 * time.Second, -1, false, Activating, 2*time.Second + time.Nanosecond},
		{"a second before the timeout", 629 * time.Second, -1, false, Activating, time.Second + time.Nanosecond},
		{"exactly the timeout: not yet", 630 * time.Second, -1, false, Activating, time.Nanosecond},
		{"just past the timeout", 630*time.Second + time.Nanosecond, 0, true, Inactive, 0},
		{"the tick after the timeout", 632 * time.Second, 0, true, Inactive, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The pod never becomes ready; the decider already says zero.
			step := Reconcile(spec, NewState(at(0)), Observation{Now: at(0).Add(tc.after), Decision: Decision{DesiredPodCount: 0, Valid: true}})
			type result struct {
				Want      int32
				Apply     bool
				Activity  Activity
				RequeueIn time.Duration
			}
			want := result{tc.want, tc.apply, tc.activity, tc.requeueIn}
			if diff := cmp.Diff(want, result{step.Want, step.Apply, step.State.Activity, step.RequeueAfter}); diff != "" {
				t.Errorf("Activating for %v, timeout %v (-want +got):\n%s", tc.after, spec.ActivationTimeout, diff)
			}
		})
	}
}

func TestReconcileBounds(t *testing.T) {
	base := defaultSpec().Scaler
	activating := NewState(at(0))
	initialized := State{Activity: Active, ActivitySince: at(0), ScaleTargetInitialized: true, Mode: SKSModeServe}
	for _, tc := range []struct {
		name      string
		spec      func(*ScalerSpec)
		state     State
		desired   int32
		wantScale int32
		wantApply bool
	}{
		{"within bounds", func(*ScalerSpec) {}, initialized, 4, 4, true},
		{"min-scale", func(s *ScalerSpec) { s.MinScale = 2 }, initialized, 1, 2, true},
		{"min-scale holds at zero load", func(s *ScalerSpec) { s.MinScale = 2 }, initialized, 0, 2, true},
		{"max-scale", func(s *ScalerSpec) { s.MaxScale = 3 }, initialized, 10, 3, true},
		{"unreachable ignores min-scale", func(s *ScalerSpec) { s.MinScale = 2; s.Reachable = false }, initialized, 1, 1, true},
		{"initial scale until reached", func(s *ScalerSpec) { s.InitialScale = 5 }, activating, 1, 5, true},
		{"initial scale once reached is forgotten", func(s *ScalerSpec) { s.InitialScale = 5 }, initialized, 1, 1, true},
		{"min-scale above initial scale", func(s *ScalerSpec) { s.InitialScale = 5; s.MinScale = 7 }, activating, 1, 7, true},
		// Knative applies the lower bound first, so it wins over max-scale.
		{"initial scale above max-scale wins until reached", func(s *ScalerSpec) { s.InitialScale = 5; s.MaxScale = 4 }, activating, 1, 5, true},
		{"min-scale above max-scale wins", func(s *ScalerSpec) { s.MinScale = 5; s.MaxScale = 3 }, initialized, 1, 5, true},
		{"no metrics yet, activating: initial scale", func(s *ScalerSpec) { s.InitialScale = 3 }, activating, -1, 3, true},
		{"no metrics yet, activating at initial 1: leave it", func(*ScalerSpec) {}, activating, -1, -1, false},
		{"no metrics yet, active: leave it", func(s *ScalerSpec) { s.MinScale = 2 }, initialized, -1, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := base
			tc.spec(&spec)
			step := Reconcile(spec, tc.state, Observation{Now: at(10), Decision: Decision{DesiredPodCount: tc.desired, Valid: tc.desired >= 0}, ReadyPods: 1})
			if diff := cmp.Diff([2]any{tc.wantScale, tc.wantApply}, [2]any{step.Want, step.Apply}); diff != "" {
				t.Errorf("want, apply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReconcileActivity(t *testing.T) {
	spec := defaultSpec().Scaler
	spec.InitialScale = 3
	spec.TargetBurstCapacity = 0
	w := &world{spec: spec, state: NewState(at(0)), replicas: 3}
	var got []outcome
	for s, ready := range []int32{0, 2, 3, 3} {
		step := Reconcile(spec, w.state, Observation{Now: at(s), Decision: Decision{DesiredPodCount: 1, Valid: true}, ReadyPods: ready})
		w.state = step.State
		got = append(got, outcome{s, step.Want, step.Apply, step.State.Activity, step.State.Mode, ready})
	}
	want := []outcome{
		{0, 3, true, Activating, SKSModeProxy, 0},
		{1, 3, true, Activating, SKSModeServe, 2},
		// Reaching the initial scale initializes the target...
		{2, 3, true, Active, SKSModeServe, 3},
		// ...after which the decider's one pod is what is wanted.
		{3, 1, true, Active, SKSModeServe, 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}

	// Scale from zero: an inactive revision gets a request.
	w = &world{spec: spec, replicas: 0, state: State{Activity: Inactive, ActivitySince: at(0), ScaleTargetInitialized: true, Mode: SKSModeProxy, ProxySince: at(0)}}
	o1, _ := w.reconcile(100, Decision{DesiredPodCount: 1, Valid: true})
	o2, _ := w.reconcile(102, Decision{DesiredPodCount: 1, Valid: true})
	if diff := cmp.Diff([]outcome{{100, 1, true, Activating, SKSModeProxy, 1}, {102, 1, true, Active, SKSModeServe, 1}}, []outcome{o1, o2}); diff != "" {
		t.Errorf("scale from zero (-want +got):\n%s", diff)
	}
}

// TestSKSMode runs the decider and the reconciler together: the target burst
// capacity decides whether the activator stays in the path.
func TestSKSMode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tbc   float64
		ready int32
		load  float64
		want  SKSMode
	}{
		{"tbc -1 always proxies", -1, 10, 1, SKSModeProxy},
		{"tbc 0 serves with pods", 0, 3, 150, SKSModeServe},
		{"tbc 0 proxies with no ready pod", 0, 0, 150, SKSModeProxy},
		{"tbc 211 proxies when the burst would not fit", 211, 2, 50, SKSModeProxy},
		{"tbc 211 serves when it fits", 211, 3, 50, SKSModeServe},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := defaultSpec()
			spec.Decider.TargetBurstCapacity, spec.Scaler.TargetBurstCapacity = tc.tbc, tc.tbc
			d := NewDecider(spec.Decider, at(0), 0)
			d.Record(at(2), tc.load, 0)
			d.Scale(at(2), tc.ready) // the first tick
			st := State{Activity: Active, ActivitySince: at(0), ScaleTargetInitialized: true, Mode: SKSModeServe}
			step := Reconcile(spec.Scaler, st, Observation{Now: at(2), Decision: d.Status(), ReadyPods: tc.ready})
			if diff := cmp.Diff(tc.want, step.State.Mode); diff != "" {
				t.Errorf("mode with EBC %d (-want +got):\n%s", d.Status().ExcessBurstCapacity, diff)
			}
		})
	}
}
