// Package ingress is knit's router: it maps a request's Host to a Route,
// picks a Revision by the Route's percents (or by tag host, or with
// config-features' tag-header-based-routing by the Knative-Serving-Tag
// header), and proxies to that Revision's public endpoints — replicas in
// Serve mode, activators in Proxy mode. Its table is a pure function of
// Routes' status, the public EndpointSlices and config-features, rebuilt
// on change and swapped atomically, so the request path takes no lock.
// Until its first table a router holds requests rather than answering 404
// for hosts it has not read yet.
package ingress
