package h1proxy

import (
	"bufio"
	"net/http"
	"os"
	"strings"
)

// Bodiless reports whether r may take the fast path as far as its
// shape goes: a GET or HEAD without a body, an upgrade or an opaque URL,
// whose query and Host http.Transport and ReverseProxy's Rewrite mode
// send unchanged, so what goes upstream is fully decided by the head its
// caller writes. The protocol r came in with is the caller's to judge.
func Bodiless(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 || r.URL.Opaque != "" {
		return false
	}
	if !plainQuery(r.URL.RawQuery) || !plainHost(r.Host) {
		return false
	}
	return !HasToken(r.Header["Connection"], "upgrade")
}

// WriteRequestLine writes what http.Transport writes first for r, a
// request Bodiless accepted: the request line with r's method and URI,
// HTTP/1.1, and r's Host. The caller writes the headers next
// (WriteUserAgent, WriteHeaderLine), then the empty line.
func WriteRequestLine(bw *bufio.Writer, r *http.Request) {
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
}

// WriteUserAgent writes the client's first User-Agent if it sent a
// non-empty one, as http.Transport writes it; none otherwise, rather
// than Go's (ReverseProxy blanks a missing one).
func WriteUserAgent(bw *bufio.Writer, h http.Header) {
	if ua := h["User-Agent"]; len(ua) > 0 && ua[0] != "" {
		WriteHeaderLine(bw, "User-Agent", ua[0])
	}
}

// WriteHeaderLine writes one header line.
func WriteHeaderLine(bw *bufio.Writer, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	bw.WriteString(v)
	bw.WriteString("\r\n")
}

// WriteTE writes "Te: trailers" when the client's Te accepts trailers,
// the one Te value ReverseProxy passes on.
func WriteTE(bw *bufio.Writer, h http.Header) {
	if HasToken(h["Te"], "trailers") {
		WriteHeaderLine(bw, "Te", "trailers")
	}
}

// TransportWrites reports whether http.Transport writes header k itself
// rather than from the request's header, for a request without a body.
func TransportWrites(k string) bool {
	return k == "Host" || k == "User-Agent" || k == "Content-Length"
}

// NamedIn reports whether the Connection header values name header k,
// as ReverseProxy's Header.Del of each name would find it: canonically,
// for a name that canonicalizes, else exactly.
func NamedIn(connection []string, k string) bool {
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

// HasToken reports whether any of the comma-separated values is token,
// ignoring ASCII case (httpguts.HeaderValuesContainsToken).
func HasToken(values []string, token string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			if asciiEqualFold(trimOWS(t), token) {
				return true
			}
		}
	}
	return false
}

// UpgradeType is the protocol a header asks to switch to, if any.
func UpgradeType(h http.Header) string {
	if !HasToken(h["Connection"], "upgrade") {
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
