package queue

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// StatsPath on the metrics port serves the JSON Stat knit's autoscaler
// scrapes. Each GET reports the window since the previous one, so the
// autoscaler should be its only caller.
const StatsPath = "/stats"

// Stat is one replica's load over a window, the numbers Knative's
// queue-proxy reports to its autoscaler (same names, in JSON).
type Stat struct {
	Namespace     string `json:"namespace,omitempty"`
	Configuration string `json:"configuration,omitempty"`
	Revision      string `json:"revision,omitempty"`
	PodName       string `json:"podName,omitempty"`

	// Timestamp is the end of the window.
	Timestamp time.Time `json:"timestamp"`
	// WindowSeconds is the window's length.
	WindowSeconds float64 `json:"windowSeconds"`

	// AverageConcurrentRequests is the time-weighted average of requests in
	// the queue-proxy (in flight to the app or queued): two requests of
	// 500 ms each in a 1 s window average 1.
	AverageConcurrentRequests float64 `json:"averageConcurrentRequests"`
	// AverageProxiedConcurrentRequests is the same for requests that came
	// through the activator (K-Proxy-Request: activator).
	AverageProxiedConcurrentRequests float64 `json:"averageProxiedConcurrentRequests"`
	// RequestCount is the number of requests that arrived in the window.
	RequestCount float64 `json:"requestCount"`
	// ProxiedRequestCount is the number of those from the activator.
	ProxiedRequestCount float64 `json:"proxiedRequestCount"`
	// RequestsPerSecond is RequestCount over the window.
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	// ProcessUptime is seconds since the queue-proxy started.
	ProcessUptime float64 `json:"processUptime"`
}

// statsReporter turns a requestTracker's counters into windowed averages.
// sample folds the counters into the window; the server calls it every
// second so the integer integrals never wrap, and report calls it once
// more before closing the window. It locks only its own state, never the
// request path.
type statsReporter struct {
	tracker *requestTracker
	labels  Stat // names only

	mu          sync.Mutex
	windowStart time.Time
	lastSample  time.Time
	lastArea    [2]int64  // all, proxied: area at lastSample
	lastCount   [2]uint64 // all, proxied: requests at lastSample
	area        [2]float64
	count       [2]float64
}

func newStatsReporter(tracker *requestTracker, labels Stat) *statsReporter {
	return &statsReporter{
		tracker:     tracker,
		labels:      labels,
		windowStart: tracker.base,
		lastSample:  tracker.base,
	}
}

// sample folds what happened since the last sample into the window.
func (s *statsReporter) sample(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sampleLocked(now)
}

func (s *statsReporter) sampleLocked(now time.Time) {
	if now.Before(s.lastSample) {
		return
	}
	us := micros(s.tracker.base, now)
	for i, c := range []*concurrencyCounter{&s.tracker.all, &s.tracker.proxied} {
		a := c.area(us)
		s.area[i] += float64(areaDelta(a, s.lastArea[i]))
		s.lastArea[i] = a
		n := c.requests.Load()
		s.count[i] += float64(n - s.lastCount[i])
		s.lastCount[i] = n
	}
	s.lastSample = now
}

// report closes the window at now and starts the next one.
func (s *statsReporter) report(now time.Time) Stat {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sampleLocked(now)
	st := s.labels
	st.Timestamp = now
	window := now.Sub(s.windowStart)
	st.WindowSeconds = window.Seconds()
	st.ProcessUptime = now.Sub(s.tracker.base).Seconds()
	st.RequestCount, st.ProxiedRequestCount = s.count[0], s.count[1]
	if us := float64(window / time.Microsecond); us > 0 {
		st.AverageConcurrentRequests = s.area[0] / us
		st.AverageProxiedConcurrentRequests = s.area[1] / us
		st.RequestsPerSecond = s.count[0] / window.Seconds()
	}
	s.windowStart = now
	s.area, s.count = [2]float64{}, [2]float64{}
	return st
}

// ServeHTTP answers GET StatsPath with the window since the last GET.
func (s *statsReporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "queue-proxy: stats are read with GET", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(s.report(time.Now()))
}

// statsHandler records each request's start and end for the autoscaler.
type statsHandler struct {
	next    http.Handler
	tracker *requestTracker
}

func (h *statsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	proxied := isActivatorProxied(r)
	h.tracker.in(time.Now(), proxied)
	defer func() { h.tracker.out(time.Now(), proxied) }()
	h.next.ServeHTTP(w, r)
}

func isActivatorProxied(r *http.Request) bool {
	v := r.Header[proxyHeader]
	return len(v) > 0 && v[0] == activatorProxyValue
}
