package activator

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"

	"github.com/knitops/knit/dataplane/forward"
)

// Header marking requests the activator forwards, so the queue-proxy
// counts them apart for the autoscaler (Knative's K-Proxy-Request).
const (
	proxyHeader = forward.ProxyHeader
	proxyValue  = "activator"
)

// maxAttempts bounds the endpoints one request tries when each refuses
// the connection.
const maxAttempts = 3

// newProxy returns the reverse proxy to the endpoint each request holds:
// the client's Host kept, the activator's peer appended to
// X-Forwarded-For, K-Proxy-Request set, upgrades passed through, errors
// answered 502 (503 when a retry found no other replica).
func newProxy(t *transport, log *slog.Logger) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:    rewrite,
		Transport:  t,
		BufferPool: forward.BufferPool{},
		ErrorLog:   slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			st := stateOf(r.Context())
			switch {
			case errors.As(err, new(*throttleError)): // a retry found no other replica
				writeThrottleError(w, r, err)
			default:
				log.Debug("Proxying failed", "revision", st.rev.name, "err", err)
				http.Error(w, fmt.Sprintf("activator: error reaching revision %s: %v", st.rev.name, err), http.StatusBadGateway)
			}
		},
	}
}

func rewrite(pr *httputil.ProxyRequest) {
	in, out := pr.In, pr.Out
	out.URL.Scheme = "http"
	out.URL.Host = stateOf(in.Context()).ep.addr
	forward.SetInner(out.Header, in) // the ingress's view passed on, our peer appended to X-Forwarded-For
	out.Header[proxyHeader] = []string{proxyValue}
}

// transport sends each request to the endpoint it holds over HTTP/1.1,
// or h2c when the client spoke HTTP/2 (gRPC stays HTTP/2 end to end). A
// refused connection means the endpoint just went away: the request,
// which reached no app, moves to another endpoint.
type transport struct{ *forward.Transport }

// newTransport returns the pooled transports shared by every Revision:
// many idle connections per replica (one replica may take all of a
// burst).
func newTransport() *transport { return &transport{forward.NewTransport(10000, 1000)} }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt := t.HTTP1
	if req.ProtoMajor == 2 {
		rt = t.H2C
	}
	st := stateOf(req.Context())
	body := forward.Hold(req)
	for attempt := 1; ; attempt++ {
		req.URL.Host = st.ep.addr
		resp, err := rt.RoundTrip(req)
		if err == nil || !forward.Refused(err) || body.Started() || attempt == maxAttempts {
			return resp, err
		}
		old := st.ep
		st.rev.demote(old.addr)
		st.rev.thr.release(old)
		st.ep = nil
		ep, err := st.rev.thr.acquire(req.Context())
		if err != nil {
			return nil, err
		}
		st.ep = ep
	}
}
