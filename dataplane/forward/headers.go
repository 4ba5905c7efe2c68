package forward

import (
	"net"
	"net/http"
	"net/textproto"
	"strings"
)

// Headers knit's hops speak among themselves, Knative's names. A client
// on the Internet must not be able to send any of them: the ingress, the
// edge, deletes them from every request (StripInternal) before it sets
// the ones it owns.
const (
	// RevisionHeader and NamespaceHeader name the Revision the ingress
	// routed a request to; the activator buffers for it and the
	// queue-proxy drops them before the app.
	RevisionHeader  = "Knative-Serving-Revision"
	NamespaceHeader = "Knative-Serving-Namespace"
	// OriginalHostHeader carries the client's Host when a proxy in front
	// had to rewrite it; the queue-proxy makes it the app's Host.
	OriginalHostHeader = "K-Original-Host"
	// NetworkProbeHeader ("queue") and KubeletProbeHeader ask the
	// queue-proxy itself, not the app, whether the replica is ready.
	NetworkProbeHeader = "K-Network-Probe"
	KubeletProbeHeader = "K-Kubelet-Probe"
	// ProxyHeader ("activator") marks a request the activator forwards;
	// the queue-proxy counts those apart for the autoscaler.
	ProxyHeader = "K-Proxy-Request"
	// RouteSignatureHeader is the ingress's signature of the Revision it
	// routed to, which the activator checks (internal/hopauth).
	RouteSignatureHeader = "Knit-Route-Signature"
)

// internalHeaders are the headers above.
var internalHeaders = [...]string{RevisionHeader, NamespaceHeader, OriginalHostHeader, NetworkProbeHeader, KubeletProbeHeader,
	ProxyHeader, RouteSignatureHeader}

// hopByHopHeaders describe one connection, not the request (RFC 9110
// 7.6.1, and httputil.ReverseProxy's list): no hop passes them on, nor
// any header the Connection header names.
var hopByHopHeaders = [...]string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// PassedOnHeaders are the edge's view of the client, which every hop
// behind it passes on as it came (ReverseProxy's Rewrite mode would drop
// them): the app reads the original scheme and host there. The edge
// itself replaces them (SetEdge); X-Forwarded-For, which each hop
// extends, is apart (ForwardedFor).
var PassedOnHeaders = [...]string{"Forwarded", "X-Forwarded-Host", "X-Forwarded-Proto"}

// IsHopByHop reports whether the canonical header name k is hop-by-hop.
func IsHopByHop(k string) bool {
	for _, h := range hopByHopHeaders {
		if k == h {
			return true
		}
	}
	return false
}

// IsInternal reports whether the canonical header name k is one of
// knit's hop-to-hop headers.
func IsInternal(k string) bool {
	for _, h := range internalHeaders {
		if k == h {
			return true
		}
	}
	return false
}

// IsForwarding reports whether the canonical header name k carries a
// proxy's view of the client (Forwarded, X-Forwarded-*).
func IsForwarding(k string) bool {
	return k == "X-Forwarded-For" || k == "Forwarded" || k == "X-Forwarded-Host" || k == "X-Forwarded-Proto"
}

// StripHopByHop deletes from h the hop-by-hop headers and those its
// Connection header names, as ReverseProxy does to both a request and
// an answer.
func StripHopByHop(h http.Header) {
	for _, f := range h["Connection"] {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = textproto.TrimString(sf); sf != "" {
				h.Del(sf)
			}
		}
	}
	for _, f := range hopByHopHeaders {
		delete(h, f)
	}
}

// StripInternal deletes from a client's request header what only knit's
// own hops may send: the internal headers, and any name spelled with an
// underscore that reads as one of the headers these rules govern once
// '_' is '-' (X_Forwarded_For, K_Original_Host, Transfer_Encoding). Go
// keeps such names apart, but CGI, WSGI, Rack and PHP map '-' and '_'
// alike (HTTP_X_FORWARDED_FOR), so an app there would take a client's
// X_Forwarded_For for the proxy's; nginx drops underscore names by
// default for the same reason. Other underscore names pass.
func StripInternal(h http.Header) {
	for _, k := range internalHeaders {
		delete(h, k)
	}
	for k := range h {
		if strings.IndexByte(k, '_') >= 0 && governed(k) {
			delete(h, k)
		}
	}
}

// EdgeStrips reports whether StripInternal deletes the header named k:
// for a proxy that writes the edge's request itself rather than editing
// a clone of the client's header.
func EdgeStrips(k string) bool {
	return IsInternal(k) || (strings.IndexByte(k, '_') >= 0 && governed(k))
}

// governed reports whether a header name with underscores reads, with
// dashes, as an internal, forwarding, hop-by-hop or framing header.
func governed(k string) bool {
	d := textproto.CanonicalMIMEHeaderKey(strings.ReplaceAll(k, "_", "-"))
	return IsInternal(d) || IsForwarding(d) || IsHopByHop(d) || d == "Content-Length" || d == "Host" ||
		strings.HasPrefix(d, "X-Forwarded-") || strings.HasPrefix(d, "K-") || strings.HasPrefix(d, "Knative-") || strings.HasPrefix(d, "Knit-")
}

// ForwardedFor is X-Forwarded-For after a hop that got a request with
// prior values from remoteAddr: the prior values joined, then the peer's
// address. It is "" when there is nothing to send.
func ForwardedFor(prior []string, remoteAddr string) string {
	clientIP, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		clientIP = ""
	}
	switch {
	case len(prior) == 0:
		return clientIP
	case len(prior) == 1 && clientIP != "":
		return prior[0] + ", " + clientIP
	}
	v := strings.Join(prior, ", ")
	if clientIP != "" {
		v += ", " + clientIP
	}
	return v
}

// SetInner applies what every hop behind the edge (the activator, the
// queue-proxy) does to a request it forwards, on top of ReverseProxy's
// Rewrite mode (which has removed the hop-by-hop and forwarding headers
// from out): the edge's PassedOnHeaders as they came, and this hop's
// peer appended to X-Forwarded-For.
func SetInner(out http.Header, in *http.Request) {
	for _, h := range PassedOnHeaders {
		if v, ok := in.Header[h]; ok {
			out[h] = v
		}
	}
	if xff := ForwardedFor(in.Header["X-Forwarded-For"], in.RemoteAddr); xff != "" {
		out["X-Forwarded-For"] = []string{xff}
	}
}

// SetEdge applies what the edge (the ingress) does to a client's request
// on top of ReverseProxy's Rewrite mode: the internal headers and their
// underscore spellings deleted (StripInternal), the client's own
// forwarding headers replaced by the edge's view — X-Forwarded-For the
// client's address alone, X-Forwarded-Host its Host, X-Forwarded-Proto
// its scheme and one RFC 7239 Forwarded element with the three — and
// the client's Host kept.
func SetEdge(out *http.Request, in *http.Request) {
	StripInternal(out.Header)
	proto := "http"
	if in.TLS != nil {
		proto = "https"
	}
	if xff := ForwardedFor(nil, in.RemoteAddr); xff != "" {
		out.Header["X-Forwarded-For"] = []string{xff}
	}
	out.Header["X-Forwarded-Host"] = []string{in.Host}
	out.Header["X-Forwarded-Proto"] = []string{proto}
	out.Header["Forwarded"] = []string{ForwardedElement(in, proto)}
	out.Host = in.Host
}

// ForwardedElement is the RFC 7239 Forwarded element the edge sends for
// a request in that came over proto ("http" or "https"):
// for=<client>;host=<host>;proto=<scheme>. An IPv6 node is bracketed and
// quoted, and the host always quoted (a port's colon is not a token
// character).
func ForwardedElement(in *http.Request, proto string) string {
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
