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
//	proxy    to the app on 127.0.0.1:USER_PORT: body-less HTTP/1.x GET and HEAD on the queue's own
//	         connection pool (h1forward.go), the rest through httputil.ReverseProxy (h2c, upgrades, bodies)
//
// The admin port (8022) serves /healthz and Knative's /wait-for-drain. The
// kubelet's preStop hook reaches it over the pod network, so any pod can:
// /wait-for-drain only waits for the drain the queue-proxy's own SIGTERM
// starts and never starts one, so a call cannot make a replica unready.
// The metrics port (9091) serves Prometheus /metrics (written by the queue
// itself, exposition.go: no client library in the sidecar) and the JSON
// [Stat] on [StatsPath] that knit's autoscaler scrapes.
//
// The hot path takes no locks and allocates little beyond what net/http's
// server needs: counters are atomics, the breaker is a lock-free semaphore,
// response writers, deadlines with their timers and copy buffers are
// pooled, and the common request goes to the app without a request clone
// or transport goroutines.
package queue
