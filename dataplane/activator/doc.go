// Package activator is knit's activator: the data-plane component a
// Revision's traffic reaches while its ServerlessService is in Proxy mode,
// that is while it has no replica or too little spare capacity. It holds
// requests until a replica is ready, wakes the autoscaler for a Revision
// at zero, spreads requests so no replica gets more than its
// containerConcurrency, and tells the autoscaler the load it holds,
// which only it sees while it is in the path.
//
// A request names its Revision in the Knative-Serving-Namespace and
// Knative-Serving-Revision headers the ingress sets, and passes a stack of
// small http.Handler wrappers, one a file, stacked once in activator.go
// (outermost first):
//
//	lookup    the Revision from the headers: 404 without them, 403 without the
//	          ingress's signature of them (Options.RouteKeys), 502 when unknown
//	metrics   Prometheus requests by status class, latency
//	stats     time-weighted concurrency and request rate for the autoscaler
//	throttle  containerConcurrency × ready replicas, a bounded FIFO line with a
//	          wait limit (503 when full or past it); the first request at zero
//	          pokes the autoscaler at once
//	proxy     reverse proxy to the chosen queue-proxy (HTTP/1.1, h2c,
//	          upgrades), K-Proxy-Request: activator; a refused connection
//	          moves to another replica
//
// A Revision's replicas are the ready endpoints of the EndpointSlices of
// its private Service (<revision>-private, port "http"), read through a
// controller-runtime cache by SetupWithManager, or given by SetEndpoints
// when there is no API server. No replica takes traffic before it
// answers the queue-proxy's own probe (K-Network-Probe: queue), retried
// with a short backoff; first-available balancing packs replicas when
// containerConcurrency is 3 or less, round-robin spreads them otherwise.
//
// Every activator replica serves every Revision, so each takes only its
// share (share.go). It finds its place (Options.Self, its pod IP) among
// the ready endpoints of knit-system/knit-activator sorted: with at least
// as many replicas as activators, replica i of a Revision's sorted list
// is activator i mod n's, and capacity is containerConcurrency × its
// replicas; with fewer, each uses every replica for 1/n of their
// capacity, at least 1. Unlimited containerConcurrency is not split, and
// an activator alone or not among them takes everything.
//
// The activator depends on the autoscaler only through Reporter: the KPA
// in process, or HTTPReporter posting StatBatch and PokeBatch JSON to a
// remote one.
package activator
