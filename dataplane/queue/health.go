package queue

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/knitops/knit/dataplane/forward"
)

// Probe headers and user agents, as Knative spells them.
const (
	// probeHeader with value queueProbeValue asks the queue-proxy itself,
	// not the app, whether the replica is ready (activator, kubelet).
	probeHeader     = forward.NetworkProbeHeader
	queueProbeValue = "queue"
	// kubeletProbeHeader marks a kubelet probe whatever its user agent.
	kubeletProbeHeader = forward.KubeletProbeHeader
	// proxyHeader with value activatorProxyValue marks requests the
	// activator forwards; they are counted apart for the autoscaler.
	proxyHeader         = forward.ProxyHeader
	activatorProxyValue = "activator"
)

var probeUserAgents = []string{"kube-probe/", "Knative-Activator-Probe", "Knative-Autoscaling-Probe"}

// healthHandler answers readiness probes sent to the serving port and
// passes everything else on. A probe is a request carrying
// "K-Network-Probe: queue", a "K-Kubelet-Probe" header, or a kubelet,
// activator or autoscaler probe user agent. It answers 200 "queue" when
// the user container is ready and the queue is not draining, else 503.
// Like Knative, ordinary requests go through even before the app is ready.
type healthHandler struct {
	next  http.Handler
	ready func(context.Context) bool
	why   func() string // why the app is not ready; may be nil
	drain *drainer
}

func (h *healthHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isProbe(r) {
		why := h.why
		if proxied(r) {
			why = nil // a client's: why the app is not ready is not its business
		}
		writeHealth(w, !h.drain.Draining() && h.ready(r.Context()), h.drain.Draining(), queueProbeValue, why)
		return
	}
	h.drain.touch()
	h.next.ServeHTTP(w, r)
}

func isProbe(r *http.Request) bool {
	if v := r.Header[probeHeader]; len(v) > 0 && v[0] == queueProbeValue {
		return true
	}
	if _, ok := r.Header[kubeletProbeHeader]; ok {
		return true
	}
	if ua := r.Header["User-Agent"]; len(ua) > 0 {
		for _, prefix := range probeUserAgents {
			if strings.HasPrefix(ua[0], prefix) {
				return true
			}
		}
	}
	return false
}

// proxied reports whether r came through the ingress, which sets the
// forwarding headers on every request, rather than from the kubelet, the
// activator or knit's local runtime, which probe the replica directly.
// The ingress drops the probe headers from clients' requests, but a
// client may still send a probe's User-Agent (Knative answers those as
// probes too); such a probe gets the generic answer.
func proxied(r *http.Request) bool {
	_, xff := r.Header["X-Forwarded-For"]
	_, fwd := r.Header["Forwarded"]
	return xff || fwd
}

// writeHealth answers a probe: 200 with okBody when ready and not
// draining, else 503 saying why, so that whoever probes (kubelet, local
// runtime, activator) can tell a user what is wrong.
func writeHealth(w http.ResponseWriter, ready, draining bool, okBody string, why func() string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	switch {
	case draining:
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "queue-proxy: shutting down\n")
	case !ready:
		w.WriteHeader(http.StatusServiceUnavailable)
		msg := "queue-proxy: user container not ready"
		if why != nil {
			if reason := why(); reason != "" {
				msg += ": " + reason
			}
		}
		io.WriteString(w, msg+"\n")
	default:
		io.WriteString(w, okBody)
	}
}
