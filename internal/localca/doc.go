// Package localca is knit dev's own local certificate authority, in the
// manner of mkcert: one CA made on first use and kept in a directory, whose
// certificate the user trusts once (curl --cacert, or the system store),
// after which every https://<service>.<namespace>.localhost URL the ingress
// serves verifies with no warning and no per-service step.
//
// Certificates are issued on demand during the TLS handshake, from the name
// the client asks for (SNI), rather than ahead of time: every Service knit
// dev runs gets a host name nobody knew when the ingress started, and a
// wildcard would not do, since *.localhost covers one label only and the
// hosts are <service>.<namespace>.localhost. Leaves are short-lived, kept
// in memory, and never written to disk.
//
// Trusting a CA is normally a grant to vouch for any site on the Internet,
// which is why handing out a private CA is dangerous: its key, in a file
// in the user's home, would let whoever reads it impersonate their bank.
// This CA is name-constrained (RFC 5280 §4.2.1.10, marked critical): it
// may only certify "localhost", names under ".localhost", 127.0.0.0/8 and
// ::1. Clients enforce that on the CA's own certificate, so a leaf it
// signs for any other name fails verification even if the key leaks and
// someone signs by hand, and the package itself refuses to issue for any
// other name. Its leaves are also limited to server authentication.
package localca
