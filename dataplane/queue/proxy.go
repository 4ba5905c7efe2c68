package queue

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"

	"github.com/knitops/knit/dataplane/forward"
	"github.com/knitops/knit/dataplane/h1proxy"
)

// Headers the queue-proxy consumes instead of passing to the app.
const (
	// originalHostHeader carries the client's Host when a proxy in front
	// had to rewrite it (Knative's K-Original-Host). The ingress drops it
	// from clients' requests, so only knit's own hops can set it.
	originalHostHeader = forward.OriginalHostHeader
)

// revisionHeaders are routing headers the ingress and activator add;
// Knative strips them before the app, and the ingress's signature of the
// revision goes with them: it opens the activator to that revision, so
// the app has no use for it and must not be able to replay it.
var revisionHeaders = [...]string{forward.RevisionHeader, forward.NamespaceHeader, forward.RouteSignatureHeader}

// newAppProxy returns the reverse proxy to the app at addr (host:port),
// the slow path (h1forward.go mirrors its rules for the fast one),
// keeping the client's Host, applying the inner hops' forwarding rules
// (forward.SetInner: the ingress's view passed on, the peer appended to
// X-Forwarded-For), passing upgrades (websockets) through, and answering
// 502 with a clear body when the app cannot be reached.
func newAppProxy(addr string, transport http.RoundTripper, log *slog.Logger) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			in, out := pr.In, pr.Out
			out.URL.Scheme = "http"
			out.URL.Host = addr
			if h := in.Header[originalHostHeader]; len(h) > 0 {
				out.Host = h[0]
				delete(out.Header, originalHostHeader)
			}
			for _, h := range revisionHeaders {
				delete(out.Header, h)
			}
			forward.SetInner(out.Header, in)
		},
		Transport:  transport,
		BufferPool: forward.BufferPool{},
		ErrorLog:   slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if isTimeout(r.Context()) {
				return // the timeout handler answers 504
			}
			log.Debug("Proxying to the app failed", "addr", addr, "err", err)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "queue-proxy: error reaching the app on %s: %v\n", addr, err)
		},
	}
}

// newAppForwarder returns what sends requests to the app at addr: the
// fast path on t's HTTP/1.1 connection pool unless the app speaks only
// h2c, and newAppProxy for the rest.
func newAppForwarder(addr string, t *appTransport, log *slog.Logger) *appForwarder {
	f := &appForwarder{addr: addr, slow: newAppProxy(addr, t, log), log: log}
	if t.protocol != ProtocolH2C {
		f.pool = t.h1
	}
	return f
}

// appTransport picks HTTP/1.1 or h2c for each request to the app: the
// one the app's port name asks for, else the protocol the request came in
// with (Knative's auto transport), so gRPC stays HTTP/2 end to end. h1 is
// the fast path's own pool of HTTP/1.1 connections.
type appTransport struct {
	*forward.Transport
	protocol Protocol
	h1       *h1proxy.Pool
}

// newAppTransport returns pooled transports to the app at addr on
// loopback, with many idle connections kept (every request goes to one
// host).
func newAppTransport(addr string, protocol Protocol, containerConcurrency int) *appTransport {
	idle := 1000
	if containerConcurrency > 0 {
		idle = max(containerConcurrency, 100)
	}
	return &appTransport{Transport: forward.NewTransport(idle, idle), protocol: protocol, h1: h1proxy.NewPool(addr, idle)}
}

// close closes every idle connection and makes the fast path's pool
// close the ones still in use when they come back.
func (t *appTransport) close() {
	t.CloseIdleConnections()
	t.h1.CloseIdle(true)
}

func (t *appTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch t.protocol {
	case ProtocolH2C:
		return t.H2C.RoundTrip(r)
	case ProtocolAuto:
		return t.Transport.RoundTrip(r)
	default:
		return t.HTTP1.RoundTrip(r)
	}
}
