package forward

import (
	"net"
	"net/http"
	"time"
)

// Transport keeps one pooled HTTP/1.1 and one h2c transport to the
// proxy's upstreams and, as a RoundTripper, speaks the protocol the client
// spoke: HTTP/2 (h2c, gRPC) in means h2c out, anything else HTTP/1.1, so a
// gRPC client stays HTTP/2 end to end.
type Transport struct {
	HTTP1, H2C *http.Transport
}

// NewTransport returns transports keeping up to maxIdle idle connections,
// maxIdlePerHost to one upstream; no proxy from the environment, no
// transparent gzip, no HTTP/2 over TLS.
func NewTransport(maxIdle, maxIdlePerHost int) *Transport {
	t := &Transport{HTTP1: pooled(maxIdle, maxIdlePerHost), H2C: pooled(maxIdle, maxIdlePerHost)}
	t.H2C.Protocols = new(http.Protocols)
	t.H2C.Protocols.SetUnencryptedHTTP2(true)
	return t
}

func pooled(maxIdle, maxIdlePerHost int) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          maxIdle,
		MaxIdleConnsPerHost:   maxIdlePerHost,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ExpectContinueTimeout: time.Second,
	}
}

// RoundTrip sends req over h2c when it came in as HTTP/2, else HTTP/1.1.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.ProtoMajor == 2 {
		return t.H2C.RoundTrip(req)
	}
	return t.HTTP1.RoundTrip(req)
}

// CloseIdleConnections closes both pools' idle connections.
func (t *Transport) CloseIdleConnections() {
	t.HTTP1.CloseIdleConnections()
	t.H2C.CloseIdleConnections()
}
