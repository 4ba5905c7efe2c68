package buildproxy

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/knitops/knit/gitsync/egress"
)

// Timeouts of the proxy: a step waits this long at most for a host to
// answer; a relayed body or tunnel may take as long as it keeps moving,
// since a wheel or a tarball can be large.
const (
	dialTimeout           = 15 * time.Second
	responseHeaderTimeout = 60 * time.Second
	requestHeaderTimeout  = 15 * time.Second
	idleTimeout           = 2 * time.Minute
	// tunnelIdle closes a CONNECT tunnel that moved no byte either way
	// for this long.
	tunnelIdle = 5 * time.Minute
)

// Config is what a Proxy allows.
type Config struct {
	// Allow is the operator's allow list; empty allows nothing.
	Allow AllowList
	// Deny are addresses never dialled, whatever name leads there: the
	// steps' own subnet.
	Deny []netip.Prefix
	// Log gets each refusal, and at V(1) each relayed request.
	Log logr.Logger
	// Resolver resolves the names the proxy dials; nil is this machine's
	// (tests answer names themselves).
	Resolver *net.Resolver
	// Who refuses, and Setting the setting that allows a host, as a
	// refusal names them: "knit dev" and "knit dev --build-allow-host"
	// unless set (a cluster's build names its Helm value).
	Who, Setting string
}

// Proxy is the HTTP forward proxy RUN steps reach: http:// requests are
// relayed, https:// ones tunnelled with CONNECT, to allowed hosts only.
type Proxy struct {
	allow        AllowList
	who, setting string
	log          logr.Logger
	dial         func(ctx context.Context, network, addr string) (net.Conn, error)
	relay        *httputil.ReverseProxy
	server       *http.Server
	mu           sync.Mutex
	tunnels      map[net.Conn]struct{} // hijacked, closed by Close
	closed       bool
}

// New is a proxy for c. Its dials go out of this process's own network
// namespace, directly: knit dev's own HTTP_PROXY is not used, since what
// it may reach is not the steps' business.
func New(c Config) *Proxy {
	policy := &egress.Policy{Allow: egressRules(c.Allow), Deny: c.Deny}
	dialer := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second, Resolver: c.Resolver}
	dial := egress.DialContext(dialer, func() *egress.Policy { return policy })
	p := &Proxy{allow: c.Allow, who: c.Who, setting: c.Setting, log: c.Log, dial: dial, tunnels: map[net.Conn]struct{}{}}
	if p.who == "" {
		p.who, p.setting = "knit dev", "knit dev --build-allow-host"
	}
	p.relay = &httputil.ReverseProxy{
		// Rewrite, not Director: the request goes where its absolute URL
		// says, hop-by-hop headers (Proxy-Authorization among them)
		// dropped and no X-Forwarded-* added.
		Rewrite: func(*httputil.ProxyRequest) {},
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dial,
			MaxIdleConns:          32,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: responseHeaderTimeout,
			ExpectContinueTimeout: time.Second,
		},
		ErrorHandler: p.upstreamFailed,
		ErrorLog:     log.New(logWriter{c.Log}, "", 0),
	}
	p.server = &http.Server{Handler: p, ReadHeaderTimeout: requestHeaderTimeout, IdleTimeout: idleTimeout, ErrorLog: log.New(logWriter{c.Log}, "", 0)}
	return p
}

// egressRules let the dial-time check through to the addresses the
// allow list names, on their ports: 127.0.0.1:8080 allows a loopback
// server the egress policy refuses when a name resolves to it.
func egressRules(l AllowList) []egress.Rule {
	var out []egress.Rule
	for _, r := range l.Addresses() {
		for _, port := range r.Ports() {
			out = append(out, egress.Rule{Prefix: netip.PrefixFrom(r.Addr, r.Addr.BitLen()), Port: port})
		}
	}
	return out
}

// Serve serves l until Close.
func (p *Proxy) Serve(l net.Listener) error {
	err := p.server.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops serving and closes open tunnels.
func (p *Proxy) Close() error {
	err := p.server.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for c := range p.tunnels {
		_ = c.Close()
	}
	return err
}

// ServeHTTP relays an allowed request or refuses it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, port, err := target(r)
	if err != nil {
		p.log.Info("Refused a RUN step's request", "method", r.Method, "url", r.URL.Redacted(), "reason", err.Error())
		respond(w, r, http.StatusBadRequest, "Bad Request", err.Error()+"\n")
		return
	}
	hostport := net.JoinHostPort(host, strconv.Itoa(int(port)))
	if !p.allow.Allows(host, port) {
		p.refuseHost(w, r, hostport)
		return
	}
	p.log.V(1).Info("Relaying a RUN step's request", "method", r.Method, "host", hostport)
	if r.Method == http.MethodConnect {
		p.tunnel(w, r, hostport)
		return
	}
	p.relay.ServeHTTP(w, r)
}

// target is the host (lower case, no brackets) and port a request is
// for: a CONNECT's authority, or a forward request's absolute URL.
func target(r *http.Request) (string, uint16, error) {
	var host, port string
	if r.Method == http.MethodConnect {
		var err error
		if host, port, err = net.SplitHostPort(r.Host); err != nil {
			return "", 0, fmt.Errorf("CONNECT %q: want host:port", r.Host)
		}
	} else {
		if !r.URL.IsAbs() || r.URL.Host == "" {
			return "", 0, errors.New("this is knit dev's proxy for RUN steps: it relays requests for absolute http:// URLs and CONNECT tunnels, set as HTTP_PROXY and HTTPS_PROXY")
		}
		if r.URL.Scheme != "http" {
			return "", 0, fmt.Errorf("%s://: only http:// is relayed; https:// goes through CONNECT", r.URL.Scheme)
		}
		host, port = r.URL.Hostname(), r.URL.Port()
		if port == "" {
			port = "80"
		}
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if a, err := netip.ParseAddr(host); (err != nil || a.Zone() != "") && !validName(host) {
		return "", 0, fmt.Errorf("%q is not a host name or an IP address", host)
	}
	return host, uint16(n), nil
}

// logWriter turns net/http's error log into the proxy's logr log.
type logWriter struct{ log logr.Logger }

func (w logWriter) Write(b []byte) (int, error) {
	w.log.V(1).Info(strings.TrimSpace(string(b)))
	return len(b), nil
}
