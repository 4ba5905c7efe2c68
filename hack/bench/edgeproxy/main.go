// Command edgeproxy is knit's ingress as a process of its own, for `make
// bench`'s edge part, which puts it beside nginx in front of the same
// knit-queue: the Router `knit ingress` runs, served as `knit ingress`
// serves it (platform.Listen and ListenTLS, forward.DefaultLimits),
// signing routes, with a table built from one Route and one
// EndpointSlice as the control plane writes them instead of read from an
// API server. It listens on loopback only.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/dataplane/forward"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/internal/hopauth"
	"github.com/knitops/knit/platform"
)

// The Route the table serves.
const (
	namespace = "default"
	revision  = "bench-00001"
)

type flags struct {
	listen, listenTLS, upstream, host, cert, key, pprof string
	noFastPath                                          bool
}

func main() {
	var f flags
	flag.StringVar(&f.listen, "listen", "127.0.0.1:0", "loopback address to serve plain HTTP (and h2c) on")
	flag.StringVar(&f.listenTLS, "listen-tls", "", "loopback address to serve HTTPS (HTTP/1.1 and h2) on; empty serves none")
	flag.StringVar(&f.upstream, "upstream", "", "the Revision's one endpoint, 127.0.0.1:PORT (a knit-queue)")
	flag.StringVar(&f.host, "host", "bench.default.localhost", "the Route's host")
	flag.StringVar(&f.cert, "cert", "", "PEM certificate for HTTPS")
	flag.StringVar(&f.key, "key", "", "PEM key for HTTPS")
	flag.BoolVar(&f.noFastPath, "no-fast-path", false, "send every request through the ingress's ReverseProxy")
	flag.StringVar(&f.pprof, "pprof", "", "loopback address to serve net/http/pprof on, for the bench's -edge-profile; empty serves none")
	flag.Parse()
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "edgeproxy:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	for _, a := range []string{f.listen, f.listenTLS, f.upstream, f.pprof} {
		if err := loopback(a); a != "" && err != nil {
			return err
		}
	}
	router := ingress.NewRouter()
	router.SignRoutes(hopauth.Generate())
	if f.noFastPath {
		router.DisableFastPath()
	}
	table, err := benchTable(f.host, f.upstream)
	if err != nil {
		return err
	}
	router.Update(table)
	servers := []*platform.Server{}
	srv, err := platform.Listen("ingress", f.listen, router)
	if err != nil {
		return err
	}
	servers = append(servers, srv)
	if f.listenTLS != "" {
		cert, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return fmt.Errorf("loading the certificate: %w", err)
		}
		cfg := router.TLSConfig(443, func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil })
		cfg.CurvePreferences = []tls.CurveID{tls.X25519} // what nginx is pinned to beside it
		tlsSrv, err := platform.ListenTLS("ingress-https", f.listenTLS, router, cfg)
		if err != nil {
			return err
		}
		servers = append(servers, tlsSrv)
	}
	if f.pprof != "" {
		// net/http/pprof registers on http.DefaultServeMux.
		ln, err := net.Listen("tcp", f.pprof)
		if err != nil {
			return err
		}
		go http.Serve(ln, http.DefaultServeMux)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, len(servers))
	for _, s := range servers {
		forward.DefaultLimits.Apply(s.Server)
		go func() { errc <- s.Start(ctx) }()
	}
	fmt.Println("serving")
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loopback refuses an address off loopback.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q: want a loopback address", addr)
	}
	return nil
}

// benchTable is the table of one Route sending host to one Revision
// whose one ready endpoint is upstream.
func benchTable(host, upstream string) (*ingress.Table, error) {
	_, portStr, err := net.SplitHostPort(upstream)
	if err != nil {
		return nil, fmt.Errorf("-upstream %q: %w", upstream, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("-upstream %q: %w", upstream, err)
	}
	rt := servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "bench"}}
	rt.Status.URL = "http://" + host
	rt.Status.Traffic = []servingv1.TrafficTarget{{RevisionName: revision, Percent: ptr.To[int64](100)}}
	slice := discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: revision + "-bench", Labels: map[string]string{
			discoveryv1.LabelServiceName: revision, discoveryv1.LabelManagedBy: "knit-local-runtime"}},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(port))}},
	}
	return ingress.Options{}.Build([]servingv1.Route{rt}, []discoveryv1.EndpointSlice{slice}), nil
}
