// Package hopauth authenticates the hops between knit's own components
// that the pod network would otherwise leave open to any pod: the
// activators' reports to the autoscaler, and the ingress telling the
// activator which Revision a request is for. Both ends hold the same
// Keyring, one or more secret keys (a Secret the chart makes, mounted as
// a file; random per process in knit dev).
//
//   - Token is a bearer token for a named purpose, an HMAC of the purpose
//     under the first key; CheckToken compares it in constant time with
//     every key's, so a new key can be added before the old one goes.
//   - SignRoute binds a namespace, a Revision and a Unix second under the
//     first key; CheckRoute accepts a signature of any key within MaxSkew
//     of now. A signature that reaches a Revision's replica (the ingress
//     cannot tell replicas from activators among a Revision's endpoints)
//     therefore opens, to that replica's own app, only its own Revision
//     and only for minutes.
//
// HMAC-SHA256 from the standard library; no key, token or signature is
// ever logged.
package hopauth
