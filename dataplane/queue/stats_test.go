package queue

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// event is a request start or end on the fake clock, in milliseconds.
type event struct {
	at      int // ms since the tracker's base
	in      bool
	proxied bool
}

func TestStatsAveraging(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }
	type window struct {
		events   []event
		samples  []int // extra sample times inside the window (the 1 s ticker)
		reportAt int
		want     Stat
	}
	tests := []struct {
		name    string
		windows []window
	}{{
		name: "idle",
		windows: []window{{
			reportAt: 1000,
			want:     Stat{WindowSeconds: 1},
		}},
	}, {
		name: "two half-second requests average one",
		windows: []window{{
			events:   []event{{at: 0, in: true}, {at: 500}, {at: 500, in: true}, {at: 1000}},
			reportAt: 1000,
			want:     Stat{WindowSeconds: 1, AverageConcurrentRequests: 1, RequestCount: 2, RequestsPerSecond: 2},
		}},
	}, {
		name: "overlapping requests",
		windows: []window{{
			// 0-1000 one request, 250-750 a second: area 1.5 s over 2 s.
			events:   []event{{at: 0, in: true}, {at: 250, in: true}, {at: 750}, {at: 1000}},
			reportAt: 2000,
			want:     Stat{WindowSeconds: 2, AverageConcurrentRequests: 0.75, RequestCount: 2, RequestsPerSecond: 1},
		}},
	}, {
		name: "a long request spans windows and counts where it arrived",
		windows: []window{{
			events:   []event{{at: 500, in: true}},
			reportAt: 1000,
			want:     Stat{WindowSeconds: 1, AverageConcurrentRequests: 0.5, RequestCount: 1, RequestsPerSecond: 1},
		}, {
			reportAt: 2000,
			want:     Stat{WindowSeconds: 1, AverageConcurrentRequests: 1},
		}, {
			events:   []event{{at: 2250}},
			reportAt: 3000,
			want:     Stat{WindowSeconds: 1, AverageConcurrentRequests: 0.25},
		}},
	}, {
		name: "activator-proxied requests are also counted apart",
		windows: []window{{
			events: []event{
				{at: 0, in: true, proxied: true}, {at: 0, in: true}, {at: 0, in: true},
				{at: 1000, proxied: true}, {at: 1000}, {at: 2000},
			},
			reportAt: 2000,
			want: Stat{
				WindowSeconds: 2, AverageConcurrentRequests: 2, AverageProxiedConcurrentRequests: 0.5,
				RequestCount: 3, ProxiedRequestCount: 1, RequestsPerSecond: 1.5,
			},
		}},
	}, {
		name: "ticker samples inside a window change nothing",
		windows: []window{{
			events:   []event{{at: 0, in: true}, {at: 300, in: true}, {at: 2100}, {at: 2700}},
			samples:  []int{1000, 2000},
			reportAt: 3000,
			want:     Stat{WindowSeconds: 3, AverageConcurrentRequests: (2100.0 + 2400.0) / 3000, RequestCount: 2, RequestsPerSecond: 2.0 / 3},
		}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tracker := newRequestTracker(base)
			r := newStatsReporter(tracker, Stat{Revision: "hello-abc1234", PodName: "pod-1"})
			for _, w := range tt.windows {
				samples := w.samples
				for _, e := range w.events {
					for len(samples) > 0 && samples[0] <= e.at {
						r.sample(ms(samples[0]))
						samples = samples[1:]
					}
					if e.in {
						tracker.in(ms(e.at), e.proxied)
					} else {
						tracker.out(ms(e.at), e.proxied)
					}
				}
				for _, s := range samples {
					r.sample(ms(s))
				}
				got := r.report(ms(w.reportAt))
				want := w.want
				want.Revision, want.PodName = "hello-abc1234", "pod-1"
				want.Timestamp = ms(w.reportAt)
				want.ProcessUptime = ms(w.reportAt).Sub(base).Seconds()
				if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
					t.Errorf("report at %d ms (-want +got):\n%s", w.reportAt, diff)
				}
			}
		})
	}
}

// The packed counter's area survives wrapping past 2^44 µs.
func TestConcurrencyCounterWraps(t *testing.T) {
	var c concurrencyCounter
	start := int64(1) << 45 // µs since base, far past the 44-bit area field
	c.in(start)
	c.in(start + 10)
	a0 := c.area(start + 10)
	c.out(start + 1_000_010)
	a1 := c.area(start + 2_000_000)
	// 0..10 µs: 1 request; then 2 until 1_000_010; then 1 until 2_000_000.
	want := int64(2*1_000_000 + (2_000_000 - 1_000_010))
	if got := areaDelta(a1, a0); got != want {
		t.Errorf("area over the window = %d µs, want %d", got, want)
	}
	if got := c.inflight(); got != 1 {
		t.Errorf("inflight = %d, want 1", got)
	}
}

// Concurrent requests through the handler leave the counters balanced.
func TestStatsHandlerConcurrent(t *testing.T) {
	tracker := newRequestTracker(time.Now())
	h := &statsHandler{next: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), tracker: tracker}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for range 500 {
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				if i%2 == 0 {
					req.Header.Set(proxyHeader, activatorProxyValue)
				}
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
	wg.Wait()
	if got := tracker.Inflight(); got != 0 {
		t.Errorf("Inflight() = %d, want 0", got)
	}
	if got, want := tracker.all.requests.Load(), uint64(16*500); got != want {
		t.Errorf("requests = %d, want %d", got, want)
	}
	if got, want := tracker.proxied.requests.Load(), uint64(8*500); got != want {
		t.Errorf("proxied requests = %d, want %d", got, want)
	}
}

func TestStatsEndpoint(t *testing.T) {
	tracker := newRequestTracker(time.Now().Add(-time.Minute))
	r := newStatsReporter(tracker, Stat{Namespace: "default", Revision: "hello-abc1234", PodName: "pod-1"})
	tracker.in(time.Now(), false)

	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, StatsPath, nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %s", StatsPath, rec.Code, rec.Header().Get("Content-Type"))
	}
	var st Stat
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	if st.Revision != "hello-abc1234" || st.PodName != "pod-1" || st.RequestCount != 1 || st.ProcessUptime < 60 {
		t.Errorf("stat = %+v, want revision, pod, 1 request and over a minute of uptime", st)
	}

	rec = httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, StatsPath, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST %s: %d, want 405", StatsPath, rec.Code)
	}
}
