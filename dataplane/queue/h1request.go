package queue

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/knitops/knit/dataplane/forward"
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
	bw.WriteString(r.Method)
	bw.WriteByte(' ')
	if p := r.URL.EscapedPath(); p != "" {
		bw.WriteString(p)
	} else {
		bw.WriteByte('/')
	}
	if r.URL.ForceQuery || r.URL.RawQuery != "" {
		bw.WriteByte('?')
		bw.WriteString(r.URL.RawQuery)
	}
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(r.Host)
	bw.WriteString("\r\n")
	h := r.Header
	if ua := h["User-Agent"]; len(ua) > 0 && ua[0] != "" {
		writeHeaderLine(bw, "User-Agent", ua[0])
	}
	connection := h["Connection"]
	for k, vv := range h {
		if dropped(k) || (len(connection) > 0 && namedIn(connection, k)) {
			continue
		}
		for _, v := range vv {
			writeHeaderLine(bw, k, v)
		}
	}
	if headerHasToken(h["Te"], "trailers") {
		writeHeaderLine(bw, "Te", "trailers")
	}
	for _, k := range forward.PassedOnHeaders {
		for _, v := range h[k] {
			writeHeaderLine(bw, k, v)
		}
	}
	writeForwardedFor(bw, h["X-Forwarded-For"], r.RemoteAddr)
	bw.WriteString("\r\n")
}

func writeHeaderLine(bw *bufio.Writer, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	bw.WriteString(v)
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
	case "Host", "User-Agent", "Content-Length", forward.RevisionHeader, forward.NamespaceHeader, forward.OriginalHostHeader,
		forward.RouteSignatureHeader:
		return true
	}
	return forward.IsHopByHop(k) || forward.IsForwarding(k)
}

// namedIn reports whether the Connection header values name header k,
// as ReverseProxy's Header.Del of each name would find it: canonically,
// for a name that canonicalizes, else exactly.
func namedIn(connection []string, k string) bool {
	for _, v := range connection {
		for name := range strings.SplitSeq(v, ",") {
			name = trimOWS(name)
			if name == k || (isToken(name) && strings.EqualFold(name, k)) {
				return true
			}
		}
	}
	return false
}

// headerHasToken reports whether any of the comma-separated values is
// token, ignoring ASCII case (httpguts.HeaderValuesContainsToken).
func headerHasToken(values []string, token string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			if asciiEqualFold(trimOWS(t), token) {
				return true
			}
		}
	}
	return false
}

// upgradeType is the protocol a header asks to switch to, if any.
func upgradeType(h http.Header) string {
	if !headerHasToken(h["Connection"], "upgrade") {
		return ""
	}
	return h.Get("Upgrade")
}

// queryKeptAsIs is false when GODEBUG sets urlmaxqueryparams, which makes
// ReverseProxy re-encode every query.
var queryKeptAsIs = !strings.Contains(os.Getenv("GODEBUG"), "urlmaxqueryparams")

// plainQuery reports whether ReverseProxy's Rewrite mode leaves the raw
// query as it is: no ';', only well-formed escapes, at most 10,000
// parameters.
func plainQuery(q string) bool {
	if q == "" {
		return true
	}
	if !queryKeptAsIs || strings.Count(q, "&") >= 10000 {
		return false
	}
	for i := 0; i < len(q); i++ {
		switch q[i] {
		case ';':
			return false
		case '%':
			if i+2 >= len(q) || !isHex(q[i+1]) || !isHex(q[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

// plainHost reports whether http.Transport would send host unchanged: a
// non-empty printable ASCII name with no zone.
func plainHost(host string) bool {
	if host == "" || strings.Contains(host, "%") {
		return false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// trimOWS trims spaces and tabs, as textproto.TrimString.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// isToken reports whether s is a valid header name, which
// textproto.CanonicalMIMEHeaderKey canonicalizes.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || c <= ' ' || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
