// Package ingress is knit's router: it maps a request's Host to a Route,
// picks a Revision by the Route's percents (or by tag host), and proxies
// to that Revision's public endpoints — replicas in Serve mode, activators
// in Proxy mode. Its table is a pure function of Routes' status and the
// public EndpointSlices, rebuilt on change and swapped atomically, so the
// request path takes no lock.
package ingress
