// Package acme obtains TLS certificates for the host names knit's ingress
// serves from an ACME certificate authority (RFC 8555) such as Let's
// Encrypt.
//
// It is a thin layer over golang.org/x/crypto/acme, which speaks the
// protocol and signs its requests (JWS); this package adds knit's policy
// on top:
//
//   - HTTP-01 only. The ingress already answers port 80 for every host it
//     routes, so it can publish http://<host>/.well-known/acme-challenge/<token>
//     (see Solver) with no DNS provider credentials to configure and no
//     TLS listener to reconfigure mid-handshake. DNS-01 would need a
//     provider API per DNS host; TLS-ALPN-01 would need the edge's TLS
//     stack to serve challenge certificates. The price: no wildcard names,
//     which only DNS-01 can validate.
//   - A fresh ECDSA P-256 key for every certificate (see Issuer.Obtain).
//   - Errors a user can act on: an *Error carries a Knative-style
//     condition reason (ReasonChallengeFailed, ReasonRateLimited, ...),
//     the host concerned and the CA's own words, ready for a status
//     condition's reason and message.
//   - RenewAt: renew when a third of a certificate's lifetime remains.
//   - The ACME account key as PKCS#8 PEM (MarshalKey, ParseKey), so a
//     controller can keep it in a Kubernetes Secret and keep one account
//     across restarts.
//
// Package acmetest runs Pebble, Let's Encrypt's ACME test server, for
// this package's tests and for anything that wants to obtain a real
// certificate in a test.
package acme
