package autoscaler

import "time"

// applyPanic runs the panic state machine for one tick and returns the pod count
// to ask for. Panic starts the first tick the panic window wants at least
// PanicThreshold times the ready pods, is extended by every such tick, and
// ends only after a whole stable window without one, when the burst has made
// its way into the stable average. While panicking the count never goes down.
func (d *Decider) applyPanic(now time.Time, overThreshold bool, wantStable, wantPanic int32) int32 {
	switch {
	case overThreshold:
		d.panicTime = now
	case !d.panicTime.IsZero() && d.panicTime.Add(d.spec.StableWindow).Before(now):
		d.panicTime, d.maxPanicPods = time.Time{}, 0
	}
	if d.panicTime.IsZero() {
		return wantStable
	}
	// The stable window can want more than the panic window; provision for
	// the larger of the two.
	d.maxPanicPods = max(d.maxPanicPods, wantStable, wantPanic)
	return d.maxPanicPods
}
