// Package certificates obtains and renews the certificates of Routes
// (external-domain-tls) from the ACME CA config-network names, with
// HTTP-01 answered by knit's own ingress, and keeps each in a
// kubernetes.io/tls Secret of knit-system the ingress serves by SNI.
//
// knit issues certificates itself, as Caddy does, rather than through
// cert-manager: one ACME order needs nothing a cluster must install, and
// knit dev gets the same code path. An order takes seconds, so it runs in
// the background: the Route reconciler asks Ensure on every reconcile,
// is told Pending until the attempt ends, and is woken then.
package certificates
