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
	return "for=" + node + ";host=" + quote(in.Host) + ";proto=" + proto
}

// quote is an RFC 7230 quoted-string of s.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
