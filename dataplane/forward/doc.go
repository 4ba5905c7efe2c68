// Package forward holds what knit's three proxies — the queue-proxy, the
// activator and the ingress router — forward a request with: pooled
// HTTP/1.1 and h2c transports that mirror the client's protocol, the copy
// buffers httputil.ReverseProxy borrows, the request body wrapper that
// tells whether a failed attempt may be retried, the one table of
// forwarding rules every hop applies (headers.go: hop-by-hop headers,
// knit's internal headers the edge strips from clients, X-Forwarded-* and
// Forwarded at the edge and behind it) and the limits of the servers
// that face clients (limits.go). It is on every request's path, so
// nothing here allocates per request beyond what net/http does, and it
// imports only the standard library (the queue-proxy stays lean).
package forward
