package queue

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestMetricsHandler(t *testing.T) {
	reg := newMetricsRegistry()
	m := newRequestMetrics(reg, map[string]string{"revision_name": "hello-abc1234", "pod_name": ""},
		func() int64 { return 7 }, func() int64 { return 3 }, func() bool { return true })
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
	srv := httptest.NewServer(reg)
	defer srv.Close()
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
	if err := testutil.ScrapeAndCompare(srv.URL, strings.NewReader(want),
		metricRequests, metricInflight, metricDepth, metricReady); err != nil {
		t.Error(err)
	}
	families := scrape(t, srv.URL, nil)
	if got := families[metricLatency].GetMetric(); len(got) != 1 || got[0].GetHistogram().GetSampleCount() != 6 {
		t.Errorf("latency histogram = %v, want one series of 6 observations", got)
	}
}

// The histogram counts each observation in the first bucket whose bound
// is not below it, as Prometheus' le means, and its count is its buckets'.
func TestHistogram(t *testing.T) {
	h := histogram{bounds: []float64{0.1, 1}, counts: make([]atomic.Uint64, 3)}
	for _, v := range []float64{0.05, 0.1, 0.5, 1, 2, 3} {
		h.observe(v)
	}
	var buf bytes.Buffer
	w := &expoWriter{w: bufio.NewWriter(&buf)}
	h.write(w, "h", `a="b"`)
	w.w.Flush()
	want := `h_bucket{a="b",le="0.1"} 2
h_bucket{a="b",le="1"} 4
h_bucket{a="b",le="+Inf"} 6
h_sum{a="b"} 6.65
h_count{a="b"} 6
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("histogram (-want +got):\n%s", diff)
	}
}

func TestAppendFloat(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 1: "1", -1: "-1", 290800: "290800", 1.444397e+06: "1.444397e+06", 0.0025: "0.0025",
		math.Inf(1): "+Inf", math.Inf(-1): "-Inf", math.NaN(): "NaN", 9.223372036854776e+18: "9.223372036854776e+18",
	} {
		if got := string(appendFloat(nil, v)); got != want {
			t.Errorf("appendFloat(%v) = %q, want %q", v, got, want)
		}
	}
}

// /metrics serves what client_golang's registry served before the queue
// wrote it itself: the same families with the same help, type and
// series, and the same values where a value does not change between two
// reads. The reference registry is built as the queue built it.
func TestMetricsMatchClientGolang(t *testing.T) {
	labels := map[string]string{"namespace_name": "default", "revision_name": "hello-abc1234", "pod_name": "hello-abc1234-pod", "configuration_name": ""}
	inflight, queued, ready := func() int64 { return 2 }, func() int64 { return 1 }, func() bool { return true }

	ours := newMetricsRegistry()
	m := newRequestMetrics(ours, labels, inflight, queued, ready)
	addGoMetrics(ours)
	addProcessMetrics(ours)

	ref := prometheus.NewRegistry()
	constLabels := prometheus.Labels{}
	for k, v := range labels {
		if v != "" {
			constLabels[k] = v
		}
	}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricRequests, ConstLabels: constLabels,
		Help: "Requests served through the queue-proxy (probes excluded), by response status class."}, []string{"code_class"})
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{Name: metricLatency, ConstLabels: constLabels, Buckets: latencyBuckets,
		Help: "Time from a request's arrival at the queue-proxy to the end of its response, queueing included."})
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: constLabels}, f)
	}
	ref.MustRegister(requests, latency,
		gauge(metricInflight, "Requests inside the queue-proxy now, queued ones included.", func() float64 { return float64(inflight()) }),
		gauge(metricDepth, "Requests waiting for a containerConcurrency slot now.", func() float64 { return float64(queued()) }),
		gauge(metricReady, "1 when the user container passes its readiness probe.", func() float64 { return 1 }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	for _, c := range codeClasses {
		requests.WithLabelValues(c)
	}
	for _, o := range []struct {
		status int
		d      time.Duration
	}{{200, time.Millisecond}, {200, 3 * time.Second}, {404, 20 * time.Millisecond}, {503, 700 * time.Second}, {101, 0}} {
		m.observe(o.status, o.d)
		class := codeClasses[0]
		if c := o.status / 100; c >= 1 && c <= 5 {
			class = codeClasses[c]
		}
		requests.WithLabelValues(class).Inc()
		latency.Observe(o.d.Seconds())
	}

	refSrv := httptest.NewServer(promhttp.HandlerFor(ref, promhttp.HandlerOpts{Registry: ref}))
	defer refSrv.Close()
	ourSrv := httptest.NewServer(ours)
	defer ourSrv.Close()
	want, got := scrape(t, refSrv.URL, nil), scrape(t, ourSrv.URL, nil)
	if runtime.GOOS != "linux" {
		for name := range want {
			if strings.HasPrefix(name, "process_") {
				delete(want, name)
			}
		}
	}
	// Values read at different instants (memory, CPU, threads, traffic)
	// are compared by series only.
	stable := func(name string) bool {
		return strings.HasPrefix(name, "knit_queue_") || slices.Contains([]string{
			"go_info", "go_gc_gogc_percent", "go_gc_gomemlimit_bytes", "go_sched_gomaxprocs_threads",
			"process_max_fds", "process_virtual_memory_max_bytes", "process_start_time_seconds",
			"promhttp_metric_handler_errors_total",
		}, name)
	}
	if diff := cmp.Diff(asText(t, want, stable), asText(t, got, stable)); diff != "" {
		t.Errorf("/metrics (-client_golang +queue):\n%s", diff)
	}
}

// asText renders each family in the text format, the values of those
// stable rejects set to 0.
func asText(t *testing.T, families map[string]*dto.MetricFamily, stable func(string) bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, f := range families {
		if !stable(name) {
			zero := func(p **float64) {
				if *p != nil {
					*p = new(float64)
				}
			}
			for _, m := range f.Metric {
				if m.Gauge != nil {
					zero(&m.Gauge.Value)
				}
				if m.Counter != nil {
					zero(&m.Counter.Value)
					m.Counter.CreatedTimestamp = nil
				}
				if s := m.Summary; s != nil {
					zero(&s.SampleSum)
					s.SampleCount = new(uint64)
					for _, q := range s.Quantile {
						zero(&q.Value)
					}
				}
			}
		}
		var b strings.Builder
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b.String()
	}
	return out
}

// Prometheus scrapes with Accept-Encoding: gzip.
func TestMetricsGzip(t *testing.T) {
	reg := newMetricsRegistry()
	addGoMetrics(reg)
	srv := httptest.NewServer(reg)
	defer srv.Close()
	families := scrape(t, srv.URL, http.Header{"Accept-Encoding": {"gzip;q=0.8, identity;q=0.5"}})
	if _, ok := families["go_goroutines"]; !ok {
		t.Errorf("gzipped scrape has no go_goroutines: %v", families)
	}
}

// scrape GETs url and parses the text format, gunzipping if it must.
func scrape(t *testing.T, url string, header http.Header) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q, want the text format", ct)
	}
	var body io.Reader = res.Body
	if res.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	} else if header.Get("Accept-Encoding") != "" {
		t.Errorf("Accept-Encoding %q answered without gzip", header.Get("Accept-Encoding"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return families
}
