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
// httputil.NewSingleHostReverseProxy over a clone of
// http.DefaultTransport whose idle pool holds PooledIdleConns connections
// to the one upstream instead of the default two, and nothing else.
func NewPooled(upstream *url.URL) *httputil.ReverseProxy {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = PooledIdleConns
	t.MaxIdleConnsPerHost = PooledIdleConns
	p := httputil.NewSingleHostReverseProxy(upstream)
	p.Transport = t
	return p
}
