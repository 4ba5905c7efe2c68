package gateway

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/miekg/dns"
)

// Options say what a Gateway serves.
type Options struct {
	// Handler is the ingress as the cluster's own callers reach it
	// (ingress.Router.Internal).
	Handler http.Handler
	// Serves says whether the ingress answers a host (lower case, no
	// port, no final dot): those names resolve to the gateway.
	Serves func(host string) bool
	// Ports are where Handler listens: 80, for in-cluster names, and
	// knit dev's ingress port, which public URLs name.
	Ports []int
	// DNSPort is where DNS is served; 0 is 53, where resolv.conf's
	// nameserver lines point (tests choose another: 53 needs root).
	DNSPort int
	// Upstream are the resolvers ("ip:port") other names are forwarded
	// to, this machine's own; none answers them SERVFAIL.
	Upstream []string
	// Log records what fails to serve.
	Log *slog.Logger
}

// Gateway opens replicas' gateways.
type Gateway struct {
	opts   Options
	client *dns.Client
}

// New returns a Gateway serving opts.
func New(opts Options) *Gateway {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Gateway{opts: opts, client: &dns.Client{Timeout: 2 * time.Second}}
}

// Open serves the gateway at hostIP for the replica at podIP alone; the
// Closer stops it.
func (g *Gateway) Open(hostIP, podIP string) (io.Closer, error) {
	local, peer := net.ParseIP(hostIP), net.ParseIP(podIP)
	if local == nil || peer == nil {
		return nil, fmt.Errorf("gateway %q for replica %q: not IP addresses", hostIP, podIP)
	}
	open := &opened{}
	for _, port := range g.opts.Ports {
		l, err := net.Listen("tcp", net.JoinHostPort(hostIP, strconv.Itoa(port)))
		if err != nil {
			open.Close()
			return nil, fmt.Errorf("gateway %s: %w", hostIP, err)
		}
		srv := &http.Server{Handler: g.opts.Handler, ReadHeaderTimeout: 30 * time.Second}
		open.http = append(open.http, srv)
		go g.serveHTTP(srv, onlyFrom{Listener: l, peer: peer})
	}
	dnsPort := g.opts.DNSPort
	if dnsPort == 0 {
		dnsPort = 53
	}
	dnsAddr := net.JoinHostPort(hostIP, strconv.Itoa(dnsPort))
	pc, err := net.ListenPacket("udp", dnsAddr)
	if err != nil {
		open.Close()
		return nil, fmt.Errorf("gateway %s: DNS: %w", hostIP, err)
	}
	tl, err := net.Listen("tcp", dnsAddr)
	if err != nil {
		pc.Close()
		open.Close()
		return nil, fmt.Errorf("gateway %s: DNS: %w", hostIP, err)
	}
	handler := g.resolver(local, peer)
	started := make(chan struct{}, 2)
	notify := func() { started <- struct{}{} }
	open.dns = []*dns.Server{{PacketConn: pc, Handler: handler, NotifyStartedFunc: notify},
		{Listener: onlyFrom{Listener: tl, peer: peer}, Handler: handler, NotifyStartedFunc: notify}}
	for _, s := range open.dns {
		go g.serveDNS(s, started)
	}
	// Serving before the replica's first lookup, and stoppable: a DNS
	// server not yet started refuses Shutdown.
	<-started
	<-started
	return open, nil
}

func (g *Gateway) serveHTTP(srv *http.Server, l net.Listener) {
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		g.opts.Log.Warn("A replica's gateway stopped serving HTTP", "addr", l.Addr().String(), "err", err)
	}
}

// serveDNS serves s until it is shut down; a server that fails to
// start still signals started, so Open never waits for it in vain.
func (g *Gateway) serveDNS(s *dns.Server, started chan<- struct{}) {
	if err := s.ActivateAndServe(); err != nil && !errors.Is(err, net.ErrClosed) {
		g.opts.Log.Warn("A replica's gateway stopped serving DNS", "err", err)
	}
	select {
	case started <- struct{}{}:
	default:
	}
}

// opened is one replica's gateway.
type opened struct {
	http []*http.Server
	dns  []*dns.Server
}

// Close stops every listener; requests in flight are cut, as the
// replica that made them is gone.
func (o *opened) Close() error {
	var errs []error
	for _, s := range o.http {
		errs = append(errs, s.Close())
	}
	for _, s := range o.dns {
		if err := s.Shutdown(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// onlyFrom accepts connections from peer alone and closes the rest: the
// host-end address is this machine's, which its other interfaces may
// answer for too.
type onlyFrom struct {
	net.Listener
	peer net.IP
}

func (l onlyFrom) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if sameIP(c.RemoteAddr(), l.peer) {
			return c, nil
		}
		c.Close()
	}
}

// sameIP says whether addr is ip's.
func sameIP(addr net.Addr, ip net.IP) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.Equal(ip)
	case *net.UDPAddr:
		return a.IP.Equal(ip)
	}
	return false
}
