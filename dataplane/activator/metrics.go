package activator

import (
	"bufio"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// metricsHandler counts each request by Revision and status class and
// observes its latency (waiting included: that is what the client saw).
type metricsHandler struct {
	next http.Handler
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := &stateOf(r.Context()).rev.metrics
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	h.next.ServeHTTP(sw, r)
	m.observe(sw.status(), time.Since(start))
}

// Label names, Knative's.
const (
	labelNamespace = "namespace_name"
	labelRevision  = "revision_name"
	labelCodeClass = "response_code_class"
)

// metrics are the activator's Prometheus series.
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer, a *Activator) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "knit_activator_requests_total",
			Help: "Requests the activator answered, by revision and response code class.",
		}, []string{labelNamespace, labelRevision, labelCodeClass}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "knit_activator_request_duration_seconds",
			Help:    "Time from a request's arrival at the activator to its answer, waiting for a replica included.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{labelNamespace, labelRevision}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, newGauges(a)} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// codeClasses are the response_code_class values, indexed by code/100.
var codeClasses = [...]string{1: "1xx", 2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}

// revisionMetrics are one Revision's series, resolved once so a request
// does not hash label values.
type revisionMetrics struct {
	byClass [len(codeClasses)]prometheus.Counter
	latency prometheus.Observer
}

func (m *metrics) forRevision(key types.NamespacedName) revisionMetrics {
	var rm revisionMetrics
	for i, class := range codeClasses {
		if class != "" {
			rm.byClass[i] = m.requests.WithLabelValues(key.Namespace, key.Name, class)
		}
	}
	rm.latency = m.latency.WithLabelValues(key.Namespace, key.Name)
	return rm
}

// forget deletes a Revision's series.
func (m *metrics) forget(key types.NamespacedName) {
	labels := prometheus.Labels{labelNamespace: key.Namespace, labelRevision: key.Name}
	m.requests.DeletePartialMatch(labels)
	m.latency.DeletePartialMatch(labels)
}

func (rm *revisionMetrics) observe(code int, d time.Duration) {
	class := code / 100
	if class < 1 || class >= len(rm.byClass) {
		class = 5
	}
	rm.byClass[class].Inc()
	rm.latency.Observe(d.Seconds())
}

// gauges reports what each Revision's throttler holds at scrape time, so
// the request path updates no gauge.
type gauges struct {
	a              *Activator
	waiting, ready *prometheus.Desc
}

func newGauges(a *Activator) *gauges {
	labels := []string{labelNamespace, labelRevision}
	return &gauges{
		a:       a,
		waiting: prometheus.NewDesc("knit_activator_waiting_requests", "Requests waiting for a replica, by revision.", labels, nil),
		ready:   prometheus.NewDesc("knit_activator_ready_endpoints", "Replicas that passed the activator's probe, by revision.", labels, nil),
	}
}

func (g *gauges) Describe(ch chan<- *prometheus.Desc) { ch <- g.waiting; ch <- g.ready }

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	for _, r := range g.a.revisions() {
		waiting, _, ready := r.thr.counts()
		ch <- prometheus.MustNewConstMetric(g.waiting, prometheus.GaugeValue, float64(waiting), r.key.Namespace, r.key.Name)
		ch <- prometheus.MustNewConstMetric(g.ready, prometheus.GaugeValue, float64(ready), r.key.Namespace, r.key.Name)
	}
}

// statusWriter remembers the status code written. Flush and Hijack go
// through to the server's writer (streaming, websockets), and Unwrap
// lets http.ResponseController reach the rest.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack is how a protocol upgrade leaves the proxy: the 101 is written
// on the hijacked connection, so it is recorded here.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.code == 0 {
		w.code = http.StatusSwitchingProtocols
	}
	return conn, brw, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK // nothing written: the server sends 200
	}
	return w.code
}
