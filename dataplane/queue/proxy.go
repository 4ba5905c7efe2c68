package queue

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"

	"github.com/knitops/knit/dataplane/forward"
)

// Headers the queue-proxy consumes instead of passing to the app.
const (
	// originalHostHeader carries the client's Host when a proxy in front
	// had to rewrite it (Knative's K-Original-Host).
	originalHostHeader = "K-Original-Host"
)

// revisionHeaders are routing headers the activator adds; Knative strips
// them before the app.
var revisionHeaders = []string{"Knative-Serving-Revision", "Knative-Serving-Namespace"}

// forwardingHeaders survive the proxy unchanged; ReverseProxy's Rewrite
// mode would drop them, and the app needs the ingress's scheme and host.
var forwardingHeaders = []string{"Forwarded", "X-Forwarded-Host", "X-Forwarded-Proto"}

// newAppProxy returns the reverse proxy to the app at addr (host:port),
// the slow path (h1forward.go mirrors its rules for the fast one),
// keeping the client's Host, appending the client to X-Forwarded-For,
// passing upgrades (websockets) through, and answering 502 with a clear
// body when the app cannot be reached.
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
			for _, h := range forwardingHeaders {
				if v, ok := in.Header[h]; ok {
					out.Header[h] = v
				}
			}
			clientIP, _, err := net.SplitHostPort(in.RemoteAddr)
			if err != nil {
				clientIP = ""
			}
			switch prior := in.Header["X-Forwarded-For"]; {
			case len(prior) == 1 && clientIP != "":
				out.Header["X-Forwarded-For"] = []string{prior[0] + ", " + clientIP}
			case len(prior) > 0:
				v := prior[0]
				for _, p := range prior[1:] {
					v += ", " + p
				}
				if clientIP != "" {
					v += ", " + clientIP
				}
				out.Header["X-Forwarded-For"] = []string{v}
			case clientIP != "":
				out.Header["X-Forwarded-For"] = []string{clientIP}
			}
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
	h1       *connPool
}

// newAppTransport returns pooled transports to the app at addr on
// loopback, with many idle connections kept (every request goes to one
// host).
func newAppTransport(addr string, protocol Protocol, containerConcurrency int) *appTransport {
	idle := 1000
	if containerConcurrency > 0 {
		idle = max(containerConcurrency, 100)
	}
	return &appTransport{Transport: forward.NewTransport(idle, idle), protocol: protocol, h1: newConnPool(addr, idle)}
}

// close closes every idle connection and makes the fast path's pool
// close the ones still in use when they come back.
func (t *appTransport) close() {
	t.CloseIdleConnections()
	t.h1.closeIdle(true)
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
