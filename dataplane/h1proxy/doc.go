// Package h1proxy is the HTTP/1.1 forwarding fast path that knit's
// proxies share (the queue-proxy to its app, the ingress to a Revision's
// endpoints): a pool of kept-alive connections to one upstream address,
// and the exchange of one body-less request on one of them, written and
// answered on the serving goroutine, its answer relayed as
// httputil.ReverseProxy relays it. It buys the request path no request
// clone, no transport goroutines and no per-request trace.
//
// What a proxy sends upstream is its own business: the caller writes the
// request head (the proxy's forwarding rules) with the helpers here, and
// each caller holds its head to what its ReverseProxy would send with a
// differential test. Only requests Bodiless accepts may take this path;
// everything else (bodies, upgrades, HTTP/2 to the upstream) stays on
// net/http's transport.
//
// It imports only the standard library and package forward, so the
// queue-proxy stays lean.
package h1proxy
