package ingress

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// tlsSettings are the Router's HTTPS settings, set once before serving.
type tlsSettings struct {
	// port is where clients reach HTTPS, for redirects: 443 (or 0) is
	// left out of the Location.
	port int
	// fallback issues a certificate for a name no Secret serves (knit
	// dev's local CA); nil fails such a handshake.
	fallback func(*tls.ClientHelloInfo) (*tls.Certificate, error)
}

// TLSConfig returns the ingress's HTTPS configuration: a certificate
// chosen per handshake by SNI from the table (certs.go), else from
// fallback; HTTP/2 offered by ALPN so gRPC reaches its app through TLS.
// port is the HTTPS port clients use, which http-protocol Redirected
// sends them to. Call it before serving.
func (r *Router) TLSConfig(port int, fallback func(*tls.ClientHelloInfo) (*tls.Certificate, error)) *tls.Config {
	r.tls = tlsSettings{port: port, fallback: fallback}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"h2", "http/1.1"},
		GetCertificate: r.certificate,
	}
}

// firstTableWait bounds how long a handshake waits for the first table:
// net/http cancels a handshake's context only when the server closes, not
// when its client goes away.
const firstTableWait = 10 * time.Second

// certificate answers a handshake. Before the first table it waits for
// it, as a request does: a restarted ingress must not fail handshakes for
// certificates it has not read yet.
func (r *Router) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	select {
	case <-r.loaded:
	default:
		timer := time.NewTimer(firstTableWait)
		defer timer.Stop()
		select {
		case <-r.loaded:
		case <-hello.Context().Done():
			return nil, fmt.Errorf("knit: the ingress has not read its certificates yet")
		case <-timer.C:
			return nil, fmt.Errorf("knit: the ingress has not read its certificates yet")
		}
	}
	name := strings.ToLower(strings.TrimSuffix(hello.ServerName, "."))
	if name != "" {
		t := r.table.Load()
		namespace := ""
		if e := t.hosts[name]; e != nil {
			namespace = e.namespace
		}
		if c := t.certs.lookup(name, namespace, time.Now()); c != nil {
			return c, nil
		}
	}
	if r.tls.fallback != nil {
		return r.tls.fallback(hello)
	}
	if name == "" {
		return nil, fmt.Errorf("knit: no certificate without a server name (SNI)")
	}
	return nil, fmt.Errorf("knit: no certificate for %q", name)
}

// acmeChallengePrefix is where an ACME CA fetches HTTP-01 answers: over
// plain HTTP, whatever http-protocol says (RFC 8555 §8.3).
const acmeChallengePrefix = "/.well-known/acme-challenge/"

func isACMEChallenge(path string) bool { return strings.HasPrefix(path, acmeChallengePrefix) }

// answerChallenge answers an ACME CA's HTTP-01 request with the key
// authorization knit's controller published for this host and token
// (RFC 8555 §8.3: status 200, the bare key authorization), and says
// whether it did; any other challenge path is the Route's.
func (t *Table) answerChallenge(w http.ResponseWriter, req *http.Request) bool {
	host := req.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	keyAuth, ok := t.challenges[strings.ToLower(host)][strings.TrimPrefix(req.URL.Path, acmeChallengePrefix)]
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	io.WriteString(w, keyAuth)
	return true
}

// redirectToHTTPS answers a plain-HTTP request with a permanent redirect
// to the same host, path and query over HTTPS, as Knative's ingresses do
// for http-protocol Redirected.
func (r *Router) redirectToHTTPS(w http.ResponseWriter, req *http.Request) {
	host := req.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := r.tls.port; p != 0 && p != 443 {
		host += ":" + strconv.Itoa(p)
	}
	http.Redirect(w, req, "https://"+host+req.URL.RequestURI(), http.StatusMovedPermanently)
}

// negotiatedH2 says whether req is HTTP/2 only because TLS offered it.
// Every browser speaks h2 over TLS when the server offers it (ALPN), which
// says nothing of the app: forwarded as it came, the hops behind would
// speak h2c to an app that may know only HTTP/1.1 (the forward transport
// and the queue-proxy mirror the protocol they receive, right for h2c,
// which a client chooses deliberately). So the ingress forwards such a
// request as HTTP/1.1, as Envoy in front of Knative does for a Revision
// whose port is not h2c, except gRPC, which needs HTTP/2 end to end and
// says so in its content-type.
func negotiatedH2(req *http.Request) bool {
	return req.TLS != nil && req.ProtoMajor == 2 && !isGRPC(req)
}

// isGRPC is gRPC's rule: content-type application/grpc, alone or with a
// "+" or ";" suffix.
func isGRPC(req *http.Request) bool {
	ct := req.Header.Get("Content-Type")
	rest, ok := strings.CutPrefix(ct, "application/grpc")
	return ok && (rest == "" || rest[0] == '+' || rest[0] == ';')
}

// asHTTP1 makes an outgoing request HTTP/1.1, which the forward transport
// sends over its HTTP/1.1 pool.
func asHTTP1(out *http.Request) {
	out.Proto, out.ProtoMajor, out.ProtoMinor = "HTTP/1.1", 1, 1
}
