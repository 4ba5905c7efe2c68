package queue

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Probe timing. Until the app first answers, the prober retries every
// fastProbeInterval for fastProbeFor, then every startupProbeInterval, so
// a replica joins the endpoints the moment it is up (cold starts; a
// loopback dial costs microseconds); afterwards it probes every
// PeriodSeconds (default 1s). A probe of the queue-proxy itself that
// arrives before the app was ever ready is held up to probeHold for it,
// so whoever probes (kubelet, local runtime, activator) learns of
// readiness at once instead of on its next period.
const (
	fastProbeInterval    = 5 * time.Millisecond
	fastProbeFor         = time.Second
	startupProbeInterval = 25 * time.Millisecond
	probeHold            = 300 * time.Millisecond
	defaultProbePeriod   = time.Second
	defaultProbeTimeout  = time.Second
)

// readiness counts consecutive probe results against the thresholds, the
// way the kubelet does: ready after successThreshold successes in a row,
// unready after failureThreshold failures in a row.
type readiness struct {
	ready                    bool
	successes, failures      int
	successNeed, failureNeed int
}

// observe records one probe result and reports whether readiness changed.
func (r *readiness) observe(ok bool) (changed bool) {
	if ok {
		r.failures = 0
		r.successes++
		if !r.ready && r.successes >= r.successNeed {
			r.ready = true
			return true
		}
		return false
	}
	r.successes = 0
	r.failures++
	if r.ready && r.failures >= r.failureNeed {
		r.ready = false
		return true
	}
	return false
}

// prober runs the user container's probes in the background and
// publishes the verdict through Ready, read on every probe request.
type prober struct {
	probes  []userProbe
	ready   atomic.Bool
	first   chan struct{}          // closed when the app is first ready
	lastErr atomic.Pointer[string] // the latest failed check, for probe answers
	log     *slog.Logger
}

func newProber(probes []userProbe, log *slog.Logger) *prober {
	return &prober{probes: probes, log: log, first: make(chan struct{})}
}

// Ready reports whether every probe last passed its threshold.
func (p *prober) Ready() bool { return p.ready.Load() }

// ReadyHeld is Ready, except that before the app was ever ready it waits
// up to probeHold (or until ctx ends) for it to become ready.
func (p *prober) ReadyHeld(ctx context.Context) bool {
	if p.ready.Load() {
		return true
	}
	select {
	case <-p.first:
		return p.ready.Load()
	default:
	}
	t := time.NewTimer(probeHold)
	defer t.Stop()
	select {
	case <-p.first:
	case <-t.C:
	case <-ctx.Done():
	}
	return p.ready.Load()
}

// NotReadyReason is the latest failed check ("dial tcp …: connection
// refused"), empty before any check failed.
func (p *prober) NotReadyReason() string {
	if e := p.lastErr.Load(); e != nil {
		return *e
	}
	return ""
}

// run probes until ctx ends: every startupProbeInterval until the app is
// first ready, then at each probe's period.
func (p *prober) run(ctx context.Context) {
	states := make([]readiness, len(p.probes))
	for i, up := range p.probes {
		states[i] = readiness{successNeed: up.successThreshold, failureNeed: up.failureThreshold}
	}
	period := defaultProbePeriod
	for _, up := range p.probes {
		period = min(period, up.period)
	}
	everReady, began := false, time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastErr error
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		all := true
		for i, up := range p.probes {
			err := up.check(ctx)
			if err != nil {
				lastErr = err
				msg := err.Error()
				p.lastErr.Store(&msg)
			}
			states[i].observe(err == nil)
			all = all && states[i].ready
		}
		if all != p.ready.Load() {
			p.ready.Store(all)
			if all {
				p.log.Info("User container is ready")
			} else if ctx.Err() == nil {
				p.log.Warn("User container is not ready", "err", lastErr)
			}
		}
		if all && !everReady {
			everReady = true
			close(p.first)
		}
		switch {
		case everReady:
			timer.Reset(period)
		case time.Since(began) < fastProbeFor:
			timer.Reset(fastProbeInterval)
		default:
			timer.Reset(startupProbeInterval)
		}
	}
}
