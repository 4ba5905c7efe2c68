package autoscaler

import "time"

const (
	// proxyRequeue re-checks an idle revision whose SKS is already proxying:
	// nothing else will change to trigger the next reconcile (Knative's 3s).
	proxyRequeue = 3 * time.Second
	// probeRequeue re-checks once the activator should be in the path.
	probeRequeue = time.Second
)

// scaleToZero decides whether a want of 0 may be applied. A revision goes to
// zero only when scale to zero is enabled, it has been Active for a whole
// stable window (then it turns Inactive first), and, once Inactive, the
// activator has been in its path for the grace period and the pod retention
// period has passed since it turned Inactive. A revision stuck Activating
// longer than the activation timeout is given up and scaled to zero too.
func (spec ScalerSpec) scaleToZero(st State, now time.Time, want int32) (int32, bool, time.Duration) {
	if want != 0 {
		return want, true, 0
	}
	if !spec.EnableScaleToZero {
		return 1, true, 0
	}
	since := now.Sub(st.ActivitySince)
	switch st.Activity {
	case Activating:
		// Given up only once the timeout has strictly passed, as Knative's
		// CanFailActivation (>): at exactly the timeout it still waits.
		if since > spec.ActivationTimeout {
			return 0, true, 0
		}
		// Come back just past it.
		return -1, false, spec.ActivationTimeout - since + time.Nanosecond
	case Active:
		if since >= spec.StableWindow {
			// Turn Inactive now (want 0, nothing applied); scale next time.
			if st.Mode == SKSModeProxy {
				return 0, false, proxyRequeue
			}
			return 0, false, 0
		}
		return 1, true, spec.StableWindow - since
	}
	return spec.inactiveToZero(st, now, since)
}

// inactiveToZero is the Inactive branch of scaleToZero.
func (spec ScalerSpec) inactiveToZero(st State, now time.Time, inactiveFor time.Duration) (int32, bool, time.Duration) {
	// Knative probes that the activator answers for the revision; here that
	// is the SKS having switched to Proxy (with TBC -1 it always has).
	if spec.TargetBurstCapacity != -1 && st.Mode != SKSModeProxy {
		return 0, false, probeRequeue
	}
	retention := spec.ScaleToZeroPodRetentionPeriod
	if inactiveFor >= max(spec.ScaleToZeroGracePeriod, retention) {
		return 0, true, 0
	}
	if retention > 0 && inactiveFor < retention {
		return 0, false, retention - inactiveFor
	}
	if wait := spec.ScaleToZeroGracePeriod - st.proxyFor(now); wait > 0 {
		return 0, false, wait
	}
	return 0, true, 0
}
