package queuebench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// The load generator stops at its request bound, counts every request
// the server saw, sends the Host it is given, and counts failures instead
// of hiding them.
func TestRun(t *testing.T) {
	var served atomic.Int64
	var hosts atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		hosts.Store(r.Host)
		if r.URL.Path == "/fail" {
			http.Error(w, "no", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(AppBody))
	}))
	defer srv.Close()

	r, err := Run(context.Background(), LoadSpec{URL: srv.URL + "/", Host: "bench.default.localhost", Concurrency: 4, Duration: time.Minute, MaxRequests: 200})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Bounded || r.Requests != 200 || r.Errors != 0 {
		t.Errorf("bounded run = %+v, want 200 requests, no errors, Bounded", r)
	}
	if got := served.Load(); got != 200 {
		t.Errorf("server saw %d requests, want 200", got)
	}
	if h := hosts.Load(); h != "bench.default.localhost" {
		t.Errorf("Host = %v, want bench.default.localhost", h)
	}
	if r.P50 <= 0 || r.P50 > r.P99 {
		t.Errorf("percentiles p50 %v p99 %v, want 0 < p50 ≤ p99", r.P50, r.P99)
	}

	r, err = Run(context.Background(), LoadSpec{URL: srv.URL + "/fail", Concurrency: 2, Duration: time.Minute, MaxRequests: 20})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors == 0 || r.FirstErr == nil {
		t.Errorf("run against 503s = %+v, want errors counted", r)
	}

	if _, err := Run(context.Background(), LoadSpec{URL: srv.URL, Concurrency: 0, Duration: time.Second}); err == nil {
		t.Error("concurrency 0 accepted")
	}
}
