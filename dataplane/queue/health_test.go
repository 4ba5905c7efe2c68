package queue

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHealthHandler(t *testing.T) {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "app") })
	probe := func(r *http.Request) *http.Request { r.Header.Set(probeHeader, queueProbeValue); return r }
	kubelet := func(r *http.Request) *http.Request { r.Header.Set("User-Agent", "kube-probe/1.37"); return r }
	activator := func(r *http.Request) *http.Request {
		r.Header.Set("User-Agent", "Knative-Activator-Probe")
		r.Header.Set(probeHeader, queueProbeValue)
		return r
	}
	plain := func(r *http.Request) *http.Request { return r }
	otherProbe := func(r *http.Request) *http.Request { r.Header.Set(probeHeader, "probe"); return r }
	// A client through the ingress sending a probe's User-Agent: the
	// ingress drops probe headers, not user agents.
	viaIngress := func(r *http.Request) *http.Request {
		r.Header.Set("User-Agent", "kube-probe/1.37")
		r.Header.Set("X-Forwarded-For", "203.0.113.9")
		r.Header.Set("Forwarded", "for=203.0.113.9")
		return r
	}

	tests := []struct {
		name            string
		ready, draining bool
		req             func(*http.Request) *http.Request
		wantCode        int
		wantBody        string
	}{
		{"queue probe, app not ready, says why", false, false, probe, 503, "queue-proxy: user container not ready: dial tcp: connection refused\n"},
		{"queue probe, app ready", true, false, probe, 200, "queue"},
		{"a client's probe, app not ready, is not told why", false, false, viaIngress, 503, "queue-proxy: user container not ready\n"},
		{"kubelet probe, app ready", true, false, kubelet, 200, "queue"},
		{"activator probe, app ready", true, false, activator, 200, "queue"},
		{"queue probe while draining", true, true, probe, 503, "queue-proxy: shutting down\n"},
		{"request before the app is ready still goes through", false, false, plain, 200, "app"},
		{"request while draining still goes through", true, true, plain, 200, "app"},
		{"another probe header value is the app's business", true, false, otherProbe, 200, "app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDrainer()
			if tt.draining {
				d.start()
			}
			h := &healthHandler{next: app, ready: func(context.Context) bool { return tt.ready }, why: func() string { return "dial tcp: connection refused" }, drain: d}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, tt.req(httptest.NewRequest(http.MethodGet, "/", nil)))
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body, tt.wantCode, tt.wantBody)
			}
		})
	}
}
