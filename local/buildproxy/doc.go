// Package buildproxy is the one way out of knit dev's dockerfile:// RUN
// steps when the operator allows any: an HTTP forward proxy that relays
// plain http:// requests and CONNECT tunnels (https://) to the hosts on
// an allow list the operator writes (knit dev --build-allow-host), and
// refuses every other host with a 403 that names the host and the flag
// that would allow it.
//
// The proxy is what a RUN step may reach, not what enforces the rest:
// package buildkit gives steps a network whose only peer is this proxy
// (no default route, no address of this machine), so a step that ignores
// HTTP_PROXY reaches nothing. The proxy therefore only has to decide
// which hosts it relays to, and never adds anything of knit's to what it
// relays: no credentials, no Forwarded or X-Forwarded-For headers, no
// upstream proxy of knit dev's own environment.
//
// Names are matched as the step wrote them, then the address each
// resolves to is checked again by package egress at dial time: an allowed
// name that resolves to loopback, link-local or a cloud metadata address
// is refused, unless the allow list names that address itself
// (127.0.0.1:8080), as tests and local package mirrors do.
package buildproxy
