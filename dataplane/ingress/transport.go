package ingress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// retryBackoff is the wait before each retry of a refused connection: an
// endpoint set switching between replicas and activators settles in well
// under a second.
var retryBackoff = []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}

// newTransport speaks to a revision the protocol the client spoke: HTTP/2
// (h2c, gRPC) in means h2c out, anything else HTTP/1.1 — so a gRPC client
// reaches its app as HTTP/2 through the queue-proxy or the activator.
func newTransport() *mirrorTransport {
	h1 := baseTransport()
	h2c := baseTransport()
	h2c.Protocols = new(http.Protocols)
	h2c.Protocols.SetUnencryptedHTTP2(true)
	return &mirrorTransport{h1: h1, h2c: h2c}
}

func baseTransport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1000,
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// mirrorTransport picks the transport by the inbound request's protocol.
type mirrorTransport struct{ h1, h2c *http.Transport }

func (m *mirrorTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.ProtoMajor == 2 {
		return m.h2c.RoundTrip(req)
	}
	return m.h1.RoundTrip(req)
}

// retryTransport picks the endpoint for each attempt from the current
// table and retries only when the connection was refused or no endpoint
// was known — the request never reached an app, so a retry is safe.
type retryTransport struct {
	next  http.RoundTripper
	table *atomic.Pointer[Table]
}

var errNoEndpoints = errors.New("no ready endpoints")

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rev := ""
	if b, ok := req.Context().Value(backendKey{}).(*backend); ok {
		rev = b.revision
	}
	body := &holdBody{ReadCloser: req.Body}
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = body // the server closes the original when the handler returns
	}
	var lastErr error
	for _, wait := range retryBackoff {
		if err := sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		b := t.table.Load().revisions[rev]
		addr := ""
		if b != nil {
			addr = b.addr()
		}
		if addr == "" {
			lastErr = fmt.Errorf("%w for revision %s", errNoEndpoints, rev)
			continue
		}
		req.URL.Host = addr
		resp, err := t.next.RoundTrip(req)
		if err == nil || !refused(err) || body.read.Load() {
			return resp, err
		}
		lastErr = err
	}
	return nil, lastErr
}

func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d == 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// holdBody keeps the request body open across attempts (http.Transport
// closes it on a failed dial) and remembers whether any of it was read,
// in which case the request is never retried.
type holdBody struct {
	io.ReadCloser
	read atomic.Bool
}

func (b *holdBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.ReadCloser.Read(p)
}

func (b *holdBody) Close() error { return nil }

// bufferPool lends the proxy 32 KiB copy buffers.
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { b := make([]byte, 32*1024); return &b }}

func (bufferPool) Get() []byte  { return *(buffers.Get().(*[]byte)) }
func (bufferPool) Put(b []byte) { buffers.Put(&b) }
