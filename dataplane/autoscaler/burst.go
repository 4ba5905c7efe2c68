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
		return int32(math.Floor(float64(readyPods)*spec.TotalValue - tbc - panicValue))
	default:
		return -1
	}
}
