package forward

import (
	"net/http"
	"time"
)

// Limits bound what a client may hold of a proxy's server: the ingress,
// which faces the Internet, and the queue-proxy, in front of every app.
// net/http's defaults are no idle limit at all (a keep-alive connection
// left open lives, with its goroutine, buffers and file descriptor, until
// the client closes it) and 1 MiB of request head.
type Limits struct {
	// ReadHeaderTimeout bounds the wait for a request's head (slowloris);
	// applied only to a server that set none.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's head; a larger one is answered
	// 431 Request Header Fields Too Large. net/http allows 4 KiB more.
	MaxHeaderBytes int
}

// DefaultLimits are the ingress's and the queue-proxy's limits.
// IdleTimeout is longer than the 90s after which knit's own transports
// (NewTransport, the queue's app pool) drop an idle connection, so a
// server never closes one a hop behind it is about to reuse; clients on
// the Internet keep theirs for a minute or two. 64 KiB of head is above
// Envoy's 60 KiB default (Knative's ingresses) and far above what
// browsers send; 1 MiB a request head per connection is what an attacker
// would otherwise pin.
var DefaultLimits = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	IdleTimeout:       120 * time.Second,
	MaxHeaderBytes:    64 << 10,
}

// Apply sets l on s.
func (l Limits) Apply(s *http.Server) {
	if s.ReadHeaderTimeout == 0 {
		s.ReadHeaderTimeout = l.ReadHeaderTimeout
	}
	s.IdleTimeout = l.IdleTimeout
	s.MaxHeaderBytes = l.MaxHeaderBytes
}
