package autoscaler

import "math"

// excessBurstCapacity is the spare capacity the ready pods have beyond the
// current panic-window load and the target burst capacity: readyPods×total −
// load − TBC, floored. Negative means a burst of TBC requests could not be
// absorbed, so the activator must stay in the path to buffer it. A TBC of 0
// never asks for the activator (EBC 0) and -1 always does (EBC -1).
func excessBurstCapacity(spec DeciderSpec, readyPods int32, panicValue float64) int32 {
	switch tbc := spec.TargetBurstCapacity; {
	case tbc == 0:
		return 0
	case tbc > 0:
		return podCount(math.Floor(float64(readyPods)*spec.TotalValue - tbc - panicValue))
	default:
		return -1
	}
}

// podCount converts a computed count of pods (or of requests' worth of
// capacity) to int32, saturating at its bounds: Go leaves converting a
// float beyond int32's range to the platform (amd64 gives -2147483648), and
// a load measured, or simulated, high enough to ask for 2^31 pods must ask
// for the most there are, not for a negative count. NaN counts 0.
func podCount(f float64) int32 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}
