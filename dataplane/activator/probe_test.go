package activator

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestProbeBackoff(t *testing.T) {
	for _, elapsed := range []time.Duration{0, 100 * time.Millisecond, fastProbeFor - time.Millisecond} {
		if got := probeBackoff(elapsed, 0); got != fastProbeInterval {
			t.Errorf("probeBackoff(%v, 0) = %v, want %v while fast", elapsed, got, fastProbeInterval)
		}
	}
	want := []time.Duration{25, 50, 100, 200, 400, 800, 1000, 1000, 1000}
	for i, w := range want {
		if got := probeBackoff(fastProbeFor, i); got != w*time.Millisecond {
			t.Errorf("probeBackoff(%v, %d) = %v, want %v", fastProbeFor, i, got, w*time.Millisecond)
		}
	}
	if got := probeBackoff(time.Hour, 1000); got != time.Second {
		t.Errorf("probeBackoff(1h, 1000) = %v, want 1s", got)
	}
}

func TestProbe(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		ok     bool
	}{
		{"ready", http.StatusOK, "queue", true},
		{"not ready", http.StatusServiceUnavailable, "queue-proxy: user container not ready\n", false},
		{"an app, not a queue-proxy", http.StatusOK, "hello", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get(probeHeader) != probeValue || r.UserAgent() != probeUserAgent {
					http.Error(w, "not a probe", http.StatusBadRequest)
					return
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			tr := newTransport()
			defer tr.CloseIdleConnections()
			err := probe(context.Background(), tr.HTTP1, strings.TrimPrefix(srv.URL, "http://"), time.Minute)
			if (err == nil) != tc.ok {
				t.Fatalf("probe = %v, want ok %v", err, tc.ok)
			}
		})
	}
}
