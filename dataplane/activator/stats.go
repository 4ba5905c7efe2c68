package activator

import (
	"net/http"
	"sync"
	"time"
)

// statsHandler counts every request the activator holds for a Revision,
// waiting or in flight, for the autoscaler: while the activator is in the
// path it is the only one who sees the load.
type statsHandler struct {
	next http.Handler
}

func (h *statsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l := &stateOf(r.Context()).rev.load
	l.change(time.Now(), 1)
	defer func() { l.change(time.Now(), -1) }()
	h.next.ServeHTTP(w, r)
}

// load is a Revision's time-weighted concurrency and arrivals over the
// current window.
type load struct {
	mu       sync.Mutex
	current  int       // requests held now
	since    time.Time // last change of current, or the window's start
	area     float64   // request·seconds since the window's start
	arrivals int
	start    time.Time // the window's start
	// active is whether the last window had any load: one report of
	// zero follows the last busy window, so the autoscaler does not keep
	// a stale figure.
	active bool
}

func (l *load) reset(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.since, l.start = now, now
}

// change records delta requests arriving (positive) or leaving.
func (l *load) change(now time.Time, delta int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked(now)
	l.current += delta
	if delta > 0 {
		l.arrivals += delta
	}
}

func (l *load) advanceLocked(now time.Time) {
	if now.After(l.since) {
		l.area += float64(l.current) * now.Sub(l.since).Seconds()
		l.since = now
	}
}

// window closes the window at now and starts the next. It returns the
// average concurrency and request rate over it, and whether to report
// them (the window or the one before had load).
func (l *load) window(now time.Time) (concurrency, rps float64, report bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked(now)
	if d := now.Sub(l.start).Seconds(); d > 0 {
		concurrency, rps = l.area/d, float64(l.arrivals)/d
	}
	active := l.area > 0 || l.arrivals > 0 || l.current > 0
	report = active || l.active
	l.active = active
	l.area, l.arrivals, l.start = 0, 0, now
	return concurrency, rps, report
}

// report sends each Revision's load for the window ending at now, and
// pokes again for Revisions whose requests still wait for a replica.
func (a *Activator) report(now time.Time) {
	rep := a.opts.Reporter
	for _, r := range a.revisions() {
		if concurrency, rps, ok := r.load.window(now); ok {
			rep.ActivatorLoad(r.key, concurrency, rps)
		}
		if r.thr.pokeDue(now) {
			rep.Poke(r.key)
		}
	}
	if f, ok := rep.(flusher); ok {
		f.Flush()
	}
}
