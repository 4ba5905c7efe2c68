package ingress

import (
	"net"
	"net/http"
	"strings"
)

// appendForwarded adds this hop's RFC 7239 element to the request's
// Forwarded header, after any the client sent, as Knative's ingresses do:
// the runtime contract has an app find its caller and the original host
// and scheme there as well as in X-Forwarded-*.
func appendForwarded(out http.Header, in *http.Request) {
	element := forwardedElement(in)
	if prior := out.Values("Forwarded"); len(prior) > 0 {
		element = strings.Join(prior, ", ") + ", " + element
	}
	out["Forwarded"] = []string{element}
}

// forwardedElement is for=<client>;host=<host>;proto=<scheme>. An IPv6
// node is bracketed and quoted, and the host always quoted (a port's
// colon is not a token character).
func forwardedElement(in *http.Request) string {
	client, _, err := net.SplitHostPort(in.RemoteAddr)
	if err != nil {
		client = in.RemoteAddr
	}
	node := client
	if strings.Contains(client, ":") {
		node = `"[` + client + `]"`
	}
	if node == "" {
		node = "unknown"
	}
	proto := "http"
	if in.TLS != nil {
		proto = "https"
	}
	return "for=" + node + `;host="` + quotedPairs(in.Host) + `";proto=` + proto
}

// quotePairs escapes what a quoted-string must (RFC 7230 quoted-pair).
var quotePairs = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// quotedPairs is s as the inside of a quoted-string: s itself, with no
// copy, unless it holds a quote or a backslash (a Host header never
// should). This runs on every request.
func quotedPairs(s string) string {
	if !strings.ContainsAny(s, `"\`) {
		return s
	}
	return quotePairs.Replace(s)
}
