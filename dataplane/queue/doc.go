// Package queue is knit's queue-proxy: the sidecar beside every app replica,
// a drop-in for Knative's queue-proxy (same environment variables, probe
// headers and status codes).
//
// Every request to the replica enters on the serving port (8012) and passes
// a stack of small http.Handler wrappers, one a file, stacked once in
// server.go (outermost first):
//
//	health   answers kubelet/activator probes from the readiness prober; notes traffic while draining
//	metrics  Prometheus request count by status class and latency
//	stats    time-weighted concurrency and request rate for the autoscaler
//	timeout  total, response-start and idle timeouts (504)
//	breaker  containerConcurrency with a bounded FIFO queue (503 when full)
//	proxy    reverse proxy to the app on 127.0.0.1:USER_PORT (HTTP/1.1, h2c, upgrades)
//
// The admin port (8022) serves /healthz and Knative's /wait-for-drain; the
// metrics port (9091) serves Prometheus /metrics and the JSON [Stat] on
// [StatsPath] that knit's autoscaler scrapes.
//
// The hot path takes no locks and allocates little beyond what
// httputil.ReverseProxy itself needs: counters are atomics, the breaker is a
// lock-free semaphore, response writers and copy buffers are pooled.
package queue
