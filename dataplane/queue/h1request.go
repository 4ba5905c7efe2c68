package queue

import (
	"bufio"
	"net"
	"net/http"

	"github.com/knitops/knit/dataplane/forward"
	"github.com/knitops/knit/dataplane/h1proxy"
)

// writeRequestHead writes, for a request fastPathable accepted, the head
// the slow path sends the app: what httputil.ReverseProxy with the
// Rewrite of newAppProxy makes of r and http.Transport writes. So:
//
//   - the request line with r's method and URI, HTTP/1.1, and r's Host;
//   - the client's first User-Agent if it sent a non-empty one (none
//     otherwise, rather than Go's);
//   - every other header but the hop-by-hop ones (those named in
//     Connection too), the routing headers the activator adds, and what
//     the transport writes itself (Content-Length and the like);
//   - Te: trailers if the client accepts trailers;
//   - the client's Forwarded, X-Forwarded-Host and X-Forwarded-Proto as
//     they came, and X-Forwarded-For with the client's address appended.
//
// Header order differs (http.Transport sorts); nothing may depend on it.
func writeRequestHead(bw *bufio.Writer, r *http.Request) {
	h1proxy.WriteRequestLine(bw, r)
	h := r.Header
	h1proxy.WriteUserAgent(bw, h)
	connection := h["Connection"]
	for k, vv := range h {
		if dropped(k) || (len(connection) > 0 && h1proxy.NamedIn(connection, k)) {
			continue
		}
		for _, v := range vv {
			h1proxy.WriteHeaderLine(bw, k, v)
		}
	}
	h1proxy.WriteTE(bw, h)
	for _, k := range forward.PassedOnHeaders {
		for _, v := range h[k] {
			h1proxy.WriteHeaderLine(bw, k, v)
		}
	}
	writeForwardedFor(bw, h["X-Forwarded-For"], r.RemoteAddr)
	bw.WriteString("\r\n")
}

// writeForwardedFor writes X-Forwarded-For as newAppProxy's Rewrite sets
// it: the prior values joined, then the client's address.
func writeForwardedFor(bw *bufio.Writer, prior []string, remoteAddr string) {
	clientIP, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		clientIP = ""
	}
	if len(prior) == 0 && clientIP == "" {
		return
	}
	bw.WriteString("X-Forwarded-For: ")
	for i, p := range prior {
		if i > 0 {
			bw.WriteString(", ")
		}
		bw.WriteString(p)
	}
	if clientIP != "" {
		if len(prior) > 0 {
			bw.WriteString(", ")
		}
		bw.WriteString(clientIP)
	}
	bw.WriteString("\r\n")
}

// dropped reports whether a header of the client's never reaches the
// app as it came: hop-by-hop, written by the transport itself, a
// forwarding header (written apart, by forward.SetInner's rules), or one
// of knit's internal headers the queue-proxy consumes (the rules of
// newAppProxy, from forward's table).
func dropped(k string) bool {
	switch k {
	case forward.RevisionHeader, forward.NamespaceHeader, forward.OriginalHostHeader, forward.RouteSignatureHeader:
		return true
	}
	return h1proxy.TransportWrites(k) || forward.IsHopByHop(k) || forward.IsForwarding(k)
}
