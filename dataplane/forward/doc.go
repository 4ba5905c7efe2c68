// Package forward holds what knit's three proxies — the queue-proxy, the
// activator and the ingress router — forward a request with: pooled
// HTTP/1.1 and h2c transports that mirror the client's protocol, the copy
// buffers httputil.ReverseProxy borrows, and the request body wrapper that
// tells whether a failed attempt may be retried. It is on every request's
// path, so nothing here allocates per request beyond what net/http does,
// and it imports only the standard library (the queue-proxy stays lean).
package forward
