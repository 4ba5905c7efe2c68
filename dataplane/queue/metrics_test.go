package queue

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsHandler(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newRequestMetrics(reg, prometheus.Labels{"revision_name": "hello-abc1234"},
		func() int64 { return 7 }, func() int64 { return 3 }, func() bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/created":
			w.WriteHeader(http.StatusCreated)
		case "/missing":
			http.NotFound(w, r)
		case "/broken":
			w.WriteHeader(http.StatusBadGateway)
		case "/silent":
		default:
			io.WriteString(w, "ok")
		}
	})
	h := &metricsHandler{next: app, metrics: m}
	for _, path := range []string{"/", "/created", "/silent", "/missing", "/broken", "/broken"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	want := `
# HELP knit_queue_requests_total Requests served through the queue-proxy (probes excluded), by response status class.
# TYPE knit_queue_requests_total counter
knit_queue_requests_total{code_class="1xx",revision_name="hello-abc1234"} 0
knit_queue_requests_total{code_class="2xx",revision_name="hello-abc1234"} 3
knit_queue_requests_total{code_class="3xx",revision_name="hello-abc1234"} 0
knit_queue_requests_total{code_class="4xx",revision_name="hello-abc1234"} 1
knit_queue_requests_total{code_class="5xx",revision_name="hello-abc1234"} 2
knit_queue_requests_total{code_class="other",revision_name="hello-abc1234"} 0
# HELP knit_queue_inflight_requests Requests inside the queue-proxy now, queued ones included.
# TYPE knit_queue_inflight_requests gauge
knit_queue_inflight_requests{revision_name="hello-abc1234"} 7
# HELP knit_queue_depth Requests waiting for a containerConcurrency slot now.
# TYPE knit_queue_depth gauge
knit_queue_depth{revision_name="hello-abc1234"} 3
# HELP knit_queue_user_container_ready 1 when the user container passes its readiness probe.
# TYPE knit_queue_user_container_ready gauge
knit_queue_user_container_ready{revision_name="hello-abc1234"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		metricRequests, metricInflight, metricDepth, metricReady); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.latency); n != 1 {
		t.Errorf("latency histogram series = %d, want 1", n)
	}
}
