package autoscaler

import "time"

// Activity mirrors the PodAutoscaler's Active condition.
type Activity string

// The three values of the Active condition.
const (
	// Activating (Active=Unknown): pods are wanted but fewer than needed are
	// ready; requests wait in the activator.
	Activating Activity = "Activating"
	// Active (Active=True): enough pods are ready.
	Active Activity = "Active"
	// Inactive (Active=False): the revision is idle and scaled, or about to
	// scale, to zero.
	Inactive Activity = "Inactive"
)

// SKSMode is the ServerlessService mode: where the revision's traffic goes.
type SKSMode string

// The two ServerlessService modes.
const (
	// SKSModeServe sends traffic straight to the revision's pods.
	SKSModeServe SKSMode = "Serve"
	// SKSModeProxy sends traffic through the activator, which buffers it.
	SKSModeProxy SKSMode = "Proxy"
)

// State is what the KPA reads back between reconciles: the parts of the
// PodAutoscaler and ServerlessService status its rules depend on. Reconcile
// returns the next State; the caller persists it (in status conditions live,
// in memory in the simulator).
type State struct {
	Activity Activity
	// ActivitySince is when Activity last changed (the Active condition's
	// lastTransitionTime).
	ActivitySince time.Time
	// ScaleTargetInitialized turns true once the revision first reached its
	// initial scale; initial-scale stops applying then.
	ScaleTargetInitialized bool
	Mode                   SKSMode
	// ProxySince is when traffic started going through the activator; zero
	// in Serve mode. Scale to zero waits until it is a grace period old.
	ProxySince time.Time
}

// NewState is a new revision's state at creation: Activating, and proxied,
// since it has no ready pod yet to send traffic to.
func NewState(created time.Time) State {
	return State{Activity: Activating, ActivitySince: created, Mode: SKSModeProxy, ProxySince: created}
}

func (s *State) setActivity(a Activity, now time.Time) {
	if s.Activity != a {
		s.Activity, s.ActivitySince = a, now
	}
}

func (s *State) setMode(m SKSMode, now time.Time) {
	if s.Mode == m {
		return
	}
	s.Mode, s.ProxySince = m, time.Time{}
	if m == SKSModeProxy {
		s.ProxySince = now
	}
}

// proxyFor is how long traffic has gone through the activator.
func (s State) proxyFor(now time.Time) time.Duration {
	if s.Mode != SKSModeProxy || s.ProxySince.IsZero() {
		return 0
	}
	return now.Sub(s.ProxySince)
}
