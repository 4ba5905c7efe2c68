package queue

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Probe timing. Until the app first answers, the prober retries every
// startupProbeInterval so a replica joins the endpoints the moment it is
// up (cold starts); afterwards it probes every PeriodSeconds (default 1s).
const (
	startupProbeInterval = 25 * time.Millisecond
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
	lastErr atomic.Pointer[string] // the latest failed check, for probe answers
	log     *slog.Logger
}

func newProber(probes []userProbe, log *slog.Logger) *prober {
	return &prober{probes: probes, log: log}
}

// Ready reports whether every probe last passed its threshold.
func (p *prober) Ready() bool { return p.ready.Load() }

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
	everReady := false
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
		everReady = everReady || all
		if everReady {
			timer.Reset(period)
		} else {
			timer.Reset(startupProbeInterval)
		}
	}
}
