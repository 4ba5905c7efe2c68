package autoscaler

import (
	"math"
	"time"
)

// Decision is the Decider's output for one tick.
type Decision struct {
	// DesiredPodCount is the pod count the KPA asks for, before min/max scale
	// and scale-to-zero rules; -1 when there is no decision yet.
	DesiredPodCount int32
	// ExcessBurstCapacity is the spare capacity beyond the target burst
	// capacity; negative means the activator must stay in the request path.
	ExcessBurstCapacity int32
	// InPanic says the decider is in panic mode and will not scale down.
	InPanic bool
	// Valid is false when there was no data to decide on; such a decision
	// must not be acted upon.
	Valid bool
}

// Decider is the KPA's per-revision decision maker (Knative's autoscaler):
// it keeps the metric windows, the panic state and the scale-down delay. It
// is not safe for concurrent use; the caller serializes Record and Scale.
type Decider struct {
	spec    DeciderSpec
	metrics *Metrics
	delay   *maxWindow // nil without a scale-down delay

	started      time.Time // when NewDecider ran: the first tick is a tick interval later
	panicTime    time.Time // last tick over the panic threshold; zero when calm
	maxPanicPods int32

	status Decision
}

// NewDecider starts deciding for a revision with readyPods ready now. As in
// Knative, a decider that starts with more than one ready pod (an autoscaler
// restart) starts in panic mode, so missing history cannot scale it down,
// and it first decides a tick interval after now (see FirstTick).
func NewDecider(spec DeciderSpec, now time.Time, readyPods int32) *Decider {
	d := &Decider{
		started: now,
		metrics: NewMetrics(spec.StableWindow, spec.PanicWindow, spec.Aggregation),
		status:  Decision{DesiredPodCount: -1, ExcessBurstCapacity: initialBurstCapacity(spec)},
	}
	d.Update(spec)
	if readyPods > 1 {
		d.panicTime, d.maxPanicPods = now, readyPods
	}
	return d
}

// initialBurstCapacity is what Knative reports before the first decision:
// the capacity of the initial scale against the target burst capacity.
func initialBurstCapacity(spec DeciderSpec) int32 {
	if tbc := spec.TargetBurstCapacity; tbc <= 0 {
		return podCount(tbc)
	}
	return podCount(float64(spec.InitialScale)*spec.TotalValue - spec.TargetBurstCapacity)
}

// Update applies a changed spec, resizing the windows and the delay.
func (d *Decider) Update(spec DeciderSpec) {
	d.metrics.Resize(spec.StableWindow, spec.PanicWindow, spec.Aggregation)
	if spec.ScaleDownDelay != d.spec.ScaleDownDelay || spec.TickInterval != d.spec.TickInterval || d.delay == nil {
		d.delay = nil
		if spec.ScaleDownDelay > 0 {
			d.delay = newMaxWindow(spec.ScaleDownDelay, spec.TickInterval)
		}
	}
	d.spec = spec
}

// Record adds the revision's total observed concurrency and rps at now.
func (d *Decider) Record(now time.Time, concurrency, rps float64) {
	d.metrics.Record(now, concurrency, rps)
}

// Status is the latest valid Decision (Knative's decider status): what the
// PodAutoscaler reconciler acts on between ticks and when a tick had no data.
func (d *Decider) Status() Decision { return d.status }

// FirstTick is when the decider first decides. Knative starts a ticker of
// the tick interval (2s) with each decider, and a ticker first fires one
// interval after it starts; the activator's poke cannot come sooner either,
// since it only wakes a decider whose last decision was zero. Until then the
// decider's status is the one NewDecider set (no desired pod count yet).
func (d *Decider) FirstTick() time.Time { return d.started.Add(d.spec.TickInterval) }

// Scale decides for the tick at now, given the revision's ready pods. Before
// FirstTick, and when the windows hold no data, it has no decision: the
// result is not Valid and the status keeps the last valid one.
func (d *Decider) Scale(now time.Time, readyPods int32) Decision {
	if now.Before(d.FirstTick()) {
		return Decision{DesiredPodCount: -1, ExcessBurstCapacity: -1}
	}
	stable, panicValue, ok := d.metrics.Averages(d.spec.Metric, now)
	if !ok {
		return Decision{DesiredPodCount: -1, ExcessBurstCapacity: -1}
	}
	s := d.spec
	ready := math.Max(1, float64(readyPods))
	maxUp := math.Ceil(s.MaxScaleUpRate * ready)
	maxDown := 0.0
	if s.Reachable {
		maxDown = math.Floor(ready / s.MaxScaleDownRate)
	}
	stablePods := math.Ceil(stable / s.TargetValue)
	panicPods := math.Ceil(panicValue / s.TargetValue)
	wantStable := d.activation(stablePods, podCount(math.Min(math.Max(stablePods, maxDown), maxUp)))
	wantPanic := d.activation(panicPods, podCount(math.Min(math.Max(panicPods, maxDown), maxUp)))

	desired := d.applyPanic(now, panicPods/ready >= s.PanicThreshold, wantStable, wantPanic)
	if d.delay != nil {
		desired = d.delay.record(now, desired)
	}
	d.status = Decision{
		DesiredPodCount:     desired,
		ExcessBurstCapacity: excessBurstCapacity(s, readyPods, panicValue),
		InPanic:             !d.panicTime.IsZero(),
		Valid:               true,
	}
	return d.status
}

// activation raises a non-zero recommendation to activation-scale, so a
// revision woken from zero starts with that many pods.
func (d *Decider) activation(raw float64, want int32) int32 {
	if d.spec.ActivationScale > 1 && raw > 0 && want < d.spec.ActivationScale {
		return d.spec.ActivationScale
	}
	return want
}
