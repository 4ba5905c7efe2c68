// Package bare is the pooled bare reverse proxy `make bench` measures
// knit's queue-proxy against, in the bench's process and as a process of
// its own (hack/bench/bareproxy). It imports only the standard library,
// so that process carries nothing else.
package bare

import (
	"net/http"
	"net/http/httputil"
	"net/url"
)

// PooledIdleConns is the pooled proxy's idle-connection pool: what knit's
// and Knative's queue-proxies keep to the app at containerConcurrency 0,
// far above the bench's highest concurrency, so no proxy in the
// comparison redials under load.
const PooledIdleConns = 1000

// NewPooled is the bare proxy as a production proxy configures it:
// httputil.NewSingleHostReverseProxy over clones of
// http.DefaultTransport whose idle pools hold PooledIdleConns
// connections to the one upstream instead of the default two, one for
// HTTP/1.1 and one speaking h2c, picked by the protocol the request came
// in with (as knit's and Knative's queue-proxies pick), and nothing else.
// Its server takes h2c too (Protocols), so it carries HTTP/2 cleartext
// end to end as the queue-proxies do.
func NewPooled(upstream *url.URL) *httputil.ReverseProxy {
	h1 := http.DefaultTransport.(*http.Transport).Clone()
	h1.MaxIdleConns = PooledIdleConns
	h1.MaxIdleConnsPerHost = PooledIdleConns
	h2c := h1.Clone()
	h2c.Protocols = new(http.Protocols)
	h2c.Protocols.SetUnencryptedHTTP2(true)
	p := httputil.NewSingleHostReverseProxy(upstream)
	p.Transport = mirror{h1: h1, h2c: h2c}
	return p
}

// mirror sends a request that came over HTTP/2 as h2c, the rest over
// HTTP/1.1.
type mirror struct{ h1, h2c *http.Transport }

func (m mirror) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.ProtoMajor == 2 {
		return m.h2c.RoundTrip(r)
	}
	return m.h1.RoundTrip(r)
}

// Protocols are what the bench's servers take: HTTP/1.1 and HTTP/2
// cleartext with prior knowledge.
func Protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}
