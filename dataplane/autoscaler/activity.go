package autoscaler

import "time"

// updateActivity sets the Active condition from the wanted and ready pods, as
// Knative's computeActiveCondition does:
//
//	want 0 (or nothing needed yet)      → Inactive
//	ready below the threshold           → Activating, unless idle and inactive
//	ready at or above the threshold     → Active, unless idle and inactive
func (spec ScalerSpec) updateActivity(st *State, want, ready int32, now time.Time) {
	threshold := spec.activeThreshold(*st)
	if ready >= threshold {
		st.ScaleTargetInitialized = true
	}
	stayInactive := want <= 0 && st.Activity == Inactive
	switch {
	case want == 0 || threshold == 0:
		st.setActivity(Inactive, now)
	case ready < threshold && !stayInactive:
		st.setActivity(Activating, now)
	case ready >= threshold && !stayInactive:
		st.setActivity(Active, now)
	}
}
