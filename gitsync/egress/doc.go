// Package egress decides where knit may connect on a user's behalf. An
// EventSink's URI and a GitRepository's URL are written by whoever may
// create those objects in a namespace; without a policy they could point
// knit at its own webhooks, at etcd on loopback or at a cloud's metadata
// service, and knit would send the request with its own reach.
//
// The Policy refuses, by default, every scheme but http and https and
// every loopback, link-local, unspecified and multicast address, the
// cloud metadata services' addresses and the control plane's own
// (Policy.Deny), unless an operator allows them (Policy.Allow, from
// config-network's egress-allow). URLs are checked as written (CheckURL),
// and every connection again at dial time, on the address the name
// resolved to (DialContext), so a name that resolves to a public address
// when checked and to loopback when used (DNS rebinding) gets nowhere.
package egress
