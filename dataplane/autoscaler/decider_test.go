package autoscaler

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// target7 is a revision with autoscaling.knative.dev/target=10 at 70%
// utilization: 7 in-flight requests per pod.
func target7() DeciderSpec {
	s := defaultSpec().Decider
	s.TotalValue, s.TargetValue = 10, 7
	return s
}

// tick is one decider tick as the tests see it.
type tick struct {
	Second  int
	Desired int32
	Panic   bool
}

// runDecider starts a decider at second 0, records load(s) every second in
// [0, seconds) and ticks every 2s from second 2, as Knative's ticker does.
// Pods become ready at once: each tick sees the previous tick's desired pods
// as ready (startReady before the first), unless fixedReady is set.
func runDecider(spec DeciderSpec, seconds int, startReady int32, fixedReady bool, load func(s int) float64) []tick {
	d := NewDecider(spec, at(0), 0)
	ready := startReady
	var ticks []tick
	for s := 0; s < seconds; s++ {
		d.Record(at(s), load(s), 0)
		if s == 0 || s%2 != 0 {
			continue
		}
		dec := d.Scale(at(s), ready)
		ticks = append(ticks, tick{s, dec.DesiredPodCount, dec.InPanic})
		if !fixedReady {
			ready = dec.DesiredPodCount
		}
	}
	return ticks
}

func tickAt(ticks []tick, second int) tick { return ticks[second/2-1] }

func steady(v float64) func(int) float64 { return func(int) float64 { return v } }

// TestDeciderFirstTick: Knative starts a 2s ticker with each decider (the
// multiscaler's tickInterval), and a ticker first fires one interval after it
// starts, so there is no decision before then, however much load is already
// recorded; the status stays the initial one (desired -1).
func TestDeciderFirstTick(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after time.Duration // since NewDecider
		valid bool
	}{
		{"when the decider starts", 0, false},
		{"a second later", time.Second, false},
		{"just before the first tick", 2*time.Second - time.Nanosecond, false},
		{"the first tick", 2 * time.Second, true},
		{"the second tick", 4 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDecider(target7(), at(0), 0)
			if diff := cmp.Diff(at(2), d.FirstTick()); diff != "" {
				t.Errorf("first tick (-want +got):\n%s", diff)
			}
			for s := 0; time.Duration(s)*time.Second <= tc.after; s++ {
				d.Record(at(s), 35, 0)
			}
			want := Decision{DesiredPodCount: -1, ExcessBurstCapacity: -1}
			if tc.valid {
				// 35 in flight at 7 per pod for 1 ready: 5 pods, in panic.
				want = Decision{DesiredPodCount: 5, ExcessBurstCapacity: -236, InPanic: true, Valid: true}
			}
			if diff := cmp.Diff(want, d.Scale(at(0).Add(tc.after), 1)); diff != "" {
				t.Errorf("Scale %v after the start (-want +got):\n%s", tc.after, diff)
			}
			if !tc.valid {
				if diff := cmp.Diff(Decision{DesiredPodCount: -1, ExcessBurstCapacity: -201}, d.Status()); diff != "" {
					t.Errorf("status before the first tick (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestDeciderSteadyLoad(t *testing.T) {
	// 21 in flight at 7 per pod is exactly 3 pods.
	var fromOne, fromThree, threeRawTarget []tick
	for s := 2; s < 90; s += 2 {
		// From one pod the first tick (second 2) sees 3 pods wanted for 1
		// ready (≥200%): panic, which holds for a stable window after it.
		fromOne = append(fromOne, tick{s, 3, s <= 62})
		fromThree = append(fromThree, tick{s, 3, false})
		// 3×10 (the raw target) at 7 per pod: ceil(30/7) = 5.
		threeRawTarget = append(threeRawTarget, tick{s, 5, false})
	}
	if diff := cmp.Diff(fromOne, runDecider(target7(), 90, 1, false, steady(21))); diff != "" {
		t.Errorf("from one pod (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(fromThree, runDecider(target7(), 90, 3, false, steady(21))); diff != "" {
		t.Errorf("from three pods (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(threeRawTarget, runDecider(target7(), 90, 5, false, steady(30))); diff != "" {
		t.Errorf("30 in flight (-want +got):\n%s", diff)
	}
}

func TestDeciderStepBurst(t *testing.T) {
	load := func(s int) float64 {
		if s >= 60 && s < 80 {
			return 70
		}
		return 7
	}
	ticks := runDecider(target7(), 140, 1, false, load)
	want := []tick{
		{58, 1, false},
		// Panic window 55..60 averages 17.5 → 3 pods for 1 ready: panic.
		{60, 3, true},
		// 57..62 averages 38.5 → 6 for 3 ready, still ≥200%.
		{62, 6, true},
		// 59..64 averages 59.5 → 9 for 6 ready: under the threshold, but
		// panic mode holds and only grows.
		{64, 9, true},
		{66, 10, true},
		// The burst is over, yet panic mode never scales down.
		{80, 10, true},
		{100, 10, true},
		// The last tick over the threshold was 62: panic ends after 62+60.
		{122, 10, true},
		// Stable window 65..124 averages 22.75 → 4, held at 10/2 by the max
		// scale down rate.
		{124, 5, false},
		{126, 3, false},
	}
	var got []tick
	for _, w := range want {
		got = append(got, tickAt(ticks, w.Second))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ticks (-want +got):\n%s", diff)
	}
	for s := 62; s <= 122; s += 2 {
		if prev, cur := tickAt(ticks, s-2), tickAt(ticks, s); cur.Desired < prev.Desired {
			t.Errorf("scaled down during panic: %+v after %+v", cur, prev)
		}
	}
}

func TestDeciderRamp(t *testing.T) {
	// One more request in flight every second, up to 70 (10 pods).
	load := func(s int) float64 { return float64(min(s, 70)) }
	ticks := runDecider(target7(), 200, 1, false, load)
	for i := 1; i < 35; i++ { // the ticks up to second 70
		if ticks[i].Desired < ticks[i-1].Desired {
			t.Errorf("a rising load scaled down: %+v after %+v", ticks[i], ticks[i-1])
		}
	}
	want := []tick{
		{8, 1, false},
		// Panic window 5..10 averages 7.5 → 2 pods for 1 ready.
		{10, 2, true},
		// Panic mode follows the ramp closely...
		{70, 10, true},
		// ...and once it ends (10+60 < 72) the lagging stable average takes
		// over: 13..72 averages 42.45 → 7, as Knative does.
		{72, 7, false},
		{102, 10, false},
		{198, 10, false},
	}
	var got []tick
	for _, w := range want {
		got = append(got, tickAt(ticks, w.Second))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ticks (-want +got):\n%s", diff)
	}
}

func TestDeciderMaxScaleDownRate(t *testing.T) {
	ticks := runDecider(target7(), 10, 10, false, steady(0))
	want := []tick{{2, 5, false}, {4, 2, false}, {6, 1, false}, {8, 0, false}}
	if diff := cmp.Diff(want, ticks); diff != "" {
		t.Errorf("halving (-want +got):\n%s", diff)
	}
	unreachable := target7()
	unreachable.Reachable = false
	if diff := cmp.Diff(tick{2, 0, false}, runDecider(unreachable, 3, 10, false, steady(0))[0]); diff != "" {
		t.Errorf("unreachable drops at once (-want +got):\n%s", diff)
	}
}

func TestDeciderRestartStartsInPanic(t *testing.T) {
	d := NewDecider(target7(), at(0), 10)
	ready := int32(10)
	var got []tick
	for s := 0; s <= 68; s++ {
		d.Record(at(s), 0, 0)
		if s%2 == 0 {
			dec := d.Scale(at(s), ready)
			ready = dec.DesiredPodCount
			if s >= 58 {
				got = append(got, tick{s, dec.DesiredPodCount, dec.InPanic})
			}
		}
	}
	want := []tick{{58, 10, true}, {60, 10, true}, {62, 5, false}, {64, 2, false}, {66, 1, false}, {68, 0, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restart with 10 pods (-want +got):\n%s", diff)
	}
}

func TestDeciderFlappingLoad(t *testing.T) {
	// 35 in flight for 10s, nothing for 10s, over a 6s stable window.
	spec := target7()
	spec.StableWindow, spec.PanicWindow = 6*time.Second, time.Second
	load := func(s int) float64 {
		if s%20 < 10 {
			return 35
		}
		return 0
	}
	changes := func(ticks []tick) int {
		n := 0
		for i := 1; i < len(ticks); i++ {
			if ticks[i].Desired != ticks[i-1].Desired {
				n++
			}
		}
		return n
	}
	if n := changes(runDecider(spec, 200, 1, false, load)[10:]); n < 10 {
		t.Fatalf("without a delay the pods changed only %d times; the test load does not flap", n)
	}
	spec.ScaleDownDelay = 20 * time.Second
	delayed := runDecider(spec, 200, 1, false, load)
	for _, tk := range delayed[10:] {
		if tk.Desired != 5 {
			t.Errorf("with a 20s scale-down delay the pods flapped: %+v", tk)
		}
	}
}

func TestDeciderScaleDownDelayIsAMaxOverTheWindow(t *testing.T) {
	spec := target7()
	spec.StableWindow, spec.PanicWindow = 6*time.Second, time.Second
	load := func(s int) float64 { return float64((s * 37) % 71) }
	plain := runDecider(spec, 120, 5, true, load)
	spec.ScaleDownDelay = 10 * time.Second
	delayed := runDecider(spec, 120, 5, true, load)
	for i := range delayed {
		want := plain[i]
		for j := max(0, i-4); j < i; j++ { // 10s = 5 ticks of 2s, this one included
			want.Desired = max(want.Desired, plain[j].Desired)
		}
		if diff := cmp.Diff(want, delayed[i]); diff != "" {
			t.Errorf("tick %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestDeciderOneRequestAtATime(t *testing.T) {
	cfg := DefaultConfig()
	spec, err := NewSpec(cfg, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Each pod targets 0.7 in flight.
	for load, want := range map[float64]int32{0.7: 1, 1: 2, 3: 5, 7: 10} {
		got := runDecider(spec.Decider, 90, want, false, steady(load))
		if diff := cmp.Diff(tick{88, want, false}, got[len(got)-1]); diff != "" {
			t.Errorf("%g in flight (-want +got):\n%s", load, diff)
		}
	}
}

func TestDeciderMaxScaleUpRate(t *testing.T) {
	spec := target7()
	spec.MaxScaleUpRate = 2
	var got []int32
	for _, tk := range runDecider(spec, 18, 1, false, steady(700)) {
		got = append(got, tk.Desired)
	}
	if diff := cmp.Diff([]int32{2, 4, 8, 16, 32, 64, 100, 100}, got); diff != "" {
		t.Errorf("doubling (-want +got):\n%s", diff)
	}
	// A rate that rounds to no growth still adds a pod: ceil(1.1×2) = 3.
	spec.MaxScaleUpRate = 1.1
	if diff := cmp.Diff(tick{2, 3, false}, runDecider(spec, 3, 2, false, steady(21))[0]); diff != "" {
		t.Errorf("slow rate (-want +got):\n%s", diff)
	}
}

func TestDeciderActivationScale(t *testing.T) {
	spec := target7()
	spec.ActivationScale = 3
	for load, want := range map[float64]int32{0: 0, 0.5: 3, 14: 3, 35: 5} {
		got := runDecider(spec, 3, max(want, 1), false, steady(load))[0]
		if diff := cmp.Diff(tick{2, want, false}, got); diff != "" {
			t.Errorf("%g in flight (-want +got):\n%s", load, diff)
		}
	}
}

func TestDeciderNoData(t *testing.T) {
	spec := target7()
	d := NewDecider(spec, at(0), 0)
	want := Decision{DesiredPodCount: -1, ExcessBurstCapacity: -201}
	if diff := cmp.Diff(want, d.Status()); diff != "" {
		t.Errorf("status before any data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Decision{DesiredPodCount: -1, ExcessBurstCapacity: -1}, d.Scale(at(2), 0)); diff != "" {
		t.Errorf("no data (-want +got):\n%s", diff)
	}
	d.Record(at(2), 14, 0)
	valid := d.Scale(at(2), 2)
	if diff := cmp.Diff(Decision{DesiredPodCount: 2, ExcessBurstCapacity: -205, Valid: true}, valid); diff != "" {
		t.Errorf("first decision (-want +got):\n%s", diff)
	}
	// A whole stable window later there is no data again; the status keeps
	// the last valid decision, as Knative's decider status does.
	if d.Scale(at(63), 2).Valid {
		t.Error("decided on a window with no data")
	}
	if diff := cmp.Diff(valid, d.Status()); diff != "" {
		t.Errorf("status after no data (-want +got):\n%s", diff)
	}
}

func TestExcessBurstCapacity(t *testing.T) {
	spec := defaultSpec().Decider // total 100 per pod
	for _, tc := range []struct {
		tbc        float64
		ready      int32
		panicValue float64
		want       int32
	}{
		{tbc: 211, ready: 3, panicValue: 50, want: 39},
		{tbc: 211, ready: 2, panicValue: 50, want: -61},
		{tbc: 211, ready: 0, panicValue: 0, want: -211},
		{tbc: 100, ready: 2, panicValue: 99.5, want: 0},
		{tbc: 0, ready: 0, panicValue: 500, want: 0},
		{tbc: -1, ready: 50, panicValue: 0, want: -1},
	} {
		spec.TargetBurstCapacity = tc.tbc
		if diff := cmp.Diff(tc.want, excessBurstCapacity(spec, tc.ready, tc.panicValue)); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc, diff)
		}
	}
	for _, tc := range []struct {
		tbc     float64
		initial int32
		want    int32
	}{{211, 1, -111}, {211, 3, 89}, {211, 0, -211}, {0, 1, 0}, {-1, 5, -1}} {
		spec.TargetBurstCapacity, spec.InitialScale = tc.tbc, tc.initial
		if diff := cmp.Diff(tc.want, NewDecider(spec, at(0), 0).Status().ExcessBurstCapacity); diff != "" {
			t.Errorf("initial %+v (-want +got):\n%s", tc, diff)
		}
	}
}

// TestPodCountSaturates: a count beyond int32 asks for the most pods (or
// the least capacity), never the value Go's conversion happens to give;
// a trace of 4e24 requests in flight made the simulator ask for a
// negative, then a billion-element, pod count (found by FuzzSimulate).
func TestPodCountSaturates(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want int32
	}{{0, 0}, {7.9, 7}, {-1, -1}, {1e12, 2147483647}, {4e24, 2147483647}, {-1e30, -2147483648}, {math.NaN(), 0}} {
		if got := podCount(tc.in); got != tc.want {
			t.Errorf("podCount(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
	p := &simulatedPods{startDelay: time.Second}
	for _, n := range []int32{1000, 1000000, 2147483647, 5} {
		p.scale(n, at(0))
	}
	if p.replicas() != 5 || p.ready(at(0)) != 0 || p.ready(at(1)) != 5 || len(p.batches) != 1 {
		t.Errorf("after scaling to 2^31-1 and back to 5: %d replicas, %d ready, %d batches", p.replicas(), p.ready(at(1)), len(p.batches))
	}
}
