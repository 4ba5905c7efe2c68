package probes

import "context"

// failureStreak counts a liveness probe's failures in a row against its
// failureThreshold; one success starts the count over, as in the kubelet.
type failureStreak struct {
	threshold, failures int32
}

// observe records one run and reports whether the probe has now failed.
func (f *failureStreak) observe(err error) (failed bool) {
	if err == nil {
		f.failures = 0
		return false
	}
	f.failures++
	return f.failures >= f.threshold
}

// Liveness probes until ctx ends, the kubelet's way for a liveness probe:
// after initialDelaySeconds, every periodSeconds (default 10), each run
// bounded by timeoutSeconds (default 1). After failureThreshold (default
// 3) failures in a row, failed is called once with the kubelet's message,
// "Liveness probe failed: …", and probing ends: the runtime kills and
// restarts the container, and its next run is probed afresh.
func (p *Prober) Liveness(ctx context.Context, failed func(msg string)) {
	s := settingsOf(p.probe)
	if !sleepCtx(ctx, s.initialDelay) {
		return
	}
	streak := failureStreak{threshold: s.failureThreshold}
	for {
		err := p.Check(ctx, s.timeout)
		if ctx.Err() != nil {
			return
		}
		if streak.observe(err) {
			failed("Liveness probe failed: " + err.Error())
			return
		}
		if !sleepCtx(ctx, s.period) {
			return
		}
	}
}
