package activator

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Header marking requests the activator forwards, so the queue-proxy
// counts them apart for the autoscaler (Knative's K-Proxy-Request).
const (
	proxyHeader = "K-Proxy-Request"
	proxyValue  = "activator"
)

// maxAttempts bounds the endpoints one request tries when each refuses
// the connection.
const maxAttempts = 3

// forwardingHeaders survive the proxy unchanged: Rewrite mode drops them,
// and the app needs the ingress's view of the scheme and host.
var forwardingHeaders = []string{"Forwarded", "X-Forwarded-Host", "X-Forwarded-Proto"}

// newProxy returns the reverse proxy to the endpoint each request holds:
// the client's Host kept, the activator's peer appended to
// X-Forwarded-For, K-Proxy-Request set, upgrades passed through, errors
// answered 502 (503 when a retry found no other replica).
func newProxy(t *transport, log *slog.Logger) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:    rewrite,
		Transport:  t,
		BufferPool: bufferPool{},
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
	if prior := in.Header["X-Forwarded-For"]; len(prior) > 0 {
		out.Header["X-Forwarded-For"] = prior
	}
	pr.SetXForwarded() // appends our peer to the client's list
	for _, h := range forwardingHeaders {
		if v, ok := in.Header[h]; ok {
			out.Header[h] = v // the ingress's view wins over ours
		}
	}
	out.Header[proxyHeader] = []string{proxyValue}
}

// transport sends each request to the endpoint it holds over HTTP/1.1,
// or h2c when the client spoke HTTP/2 (gRPC stays HTTP/2 end to end). A
// refused connection means the endpoint just went away: the request,
// which reached no app, moves to another endpoint.
type transport struct {
	http1, h2c *http.Transport
}

// newTransport returns the pooled transports shared by every Revision:
// many idle connections per replica (one replica may take all of a
// burst), no proxy from the environment, no transparent gzip.
func newTransport() *transport {
	base := func() *http.Transport {
		return &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:          10000,
			MaxIdleConnsPerHost:   1000,
			IdleConnTimeout:       90 * time.Second,
			DisableCompression:    true,
			ExpectContinueTimeout: time.Second,
			ForceAttemptHTTP2:     false,
		}
	}
	t := &transport{http1: base(), h2c: base()}
	t.h2c.Protocols = new(http.Protocols)
	t.h2c.Protocols.SetUnencryptedHTTP2(true)
	return t
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt := t.http1
	if req.ProtoMajor == 2 {
		rt = t.h2c
	}
	st := stateOf(req.Context())
	body := &holdBody{ReadCloser: req.Body}
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = body // the server closes the original when the handler returns
	}
	for attempt := 1; ; attempt++ {
		req.URL.Host = st.ep.addr
		resp, err := rt.RoundTrip(req)
		if err == nil || !refused(err) || body.read.Load() || attempt == maxAttempts {
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

// CloseIdleConnections closes pooled connections to replicas.
func (t *transport) CloseIdleConnections() {
	t.http1.CloseIdleConnections()
	t.h2c.CloseIdleConnections()
}

func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// holdBody keeps the request body open across attempts (http.Transport
// closes it when a dial fails) and remembers whether any of it was read,
// in which case the request may have reached an app and is not retried.
type holdBody struct {
	io.ReadCloser
	read atomic.Bool
}

func (b *holdBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.ReadCloser.Read(p)
}

func (b *holdBody) Close() error { return nil }

// bufferPool lends the proxy 32 KiB copy buffers; it stores array
// pointers so Put does not allocate.
type bufferPool struct{}

const copyBufferSize = 32 << 10

var copyBuffers sync.Pool

func (bufferPool) Get() []byte {
	if p, ok := copyBuffers.Get().(*[copyBufferSize]byte); ok {
		return p[:]
	}
	return make([]byte, copyBufferSize)
}

func (bufferPool) Put(b []byte) {
	if len(b) == copyBufferSize {
		copyBuffers.Put((*[copyBufferSize]byte)(b))
	}
}
