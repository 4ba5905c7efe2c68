package autoscaler

import "time"

// Knative's bounds on autoscaling knobs, shared by the ConfigMap and the
// annotations so both reject the same values Knative rejects.
const (
	// WindowMin is the shortest stable window: six one-second buckets is the
	// least that still averages anything.
	WindowMin = 6 * time.Second
	// WindowMax is the longest stable window (and scale-down delay): beyond an
	// hour the decisions are too stale to be useful.
	WindowMax = time.Hour

	PanicWindowPercentageMin = 1.0
	PanicWindowPercentageMax = 100.0
	// PanicThresholdPercentageMin is 110%: a threshold at the target itself
	// would keep the KPA panicking, and it never scales down while panicking.
	PanicThresholdPercentageMin = 110.0
	PanicThresholdPercentageMax = 1000.0

	// TargetMin is the smallest per-pod target; it keeps target divisions finite.
	TargetMin = 0.01
)
