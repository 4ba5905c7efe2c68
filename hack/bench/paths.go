package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/dataplane/activator"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/dataplane/queue/queuebench"
	"github.com/knitops/knit/dataplane/queue/queuebench/bare"
	"github.com/knitops/knit/internal/hopauth"
)

// Paths to the app beyond queuebench's, and the Revisions the ingress
// table routes them to: one whose public endpoint is the queue-proxy
// (Serve mode), one whose public endpoint is the activator (Proxy mode).
const (
	pathIngressQueue     = "ingress-queue"
	pathIngressActivator = "ingress-activator"

	benchNamespace   = "default"
	serveRevision    = "bench-00001"
	proxyRevision    = "bench-act-00001"
	serveHost        = "bench.default.localhost"
	proxyHost        = "bench-act.default.localhost"
	activatorTimeout = 10 * time.Second
)

// path is one way to reach the app, as the load generator sends it.
type path struct {
	name  string
	label string // the report's name for it
	url   string
	host  string // the Host header; empty for the URL's
	// proc is set for a proxy running as a process of its own.
	proc bool
	// cc is a queue-proxy's containerConcurrency.
	cc int
	// peer is the Knative queue-proxy path a knit one is compared with.
	peer string
}

var labels = map[string]string{
	queuebench.Direct:             "direct",
	queuebench.ReverseProxy:       "bare ReverseProxy, default transport (2 idle conns)",
	queuebench.ReverseProxyPooled: fmt.Sprintf("bare ReverseProxy, pooled (%d idle conns)", bare.PooledIdleConns),
	queuebench.QueueCC0:           "knit queue-proxy, cc=0",
	queuebench.QueueCC10:          "knit queue-proxy, cc=10",
	pathIngressQueue:              "ingress → knit queue-proxy",
	pathIngressActivator:          "ingress → activator → knit queue-proxy",
	pathProcBare:                  fmt.Sprintf("bareproxy, pooled (%d idle conns)", bare.PooledIdleConns),
	pathProcKnitCC0:               "knit-queue, cc=0",
	pathProcKnitCC0NoFast:         "knit-queue, cc=0, fast path off",
	pathProcKnativeCC0:            "Knative queue-proxy " + knativeVersion + ", cc=0",
	pathProcKnitCC10:              "knit-queue, cc=10",
	pathProcKnativeCC10:           "Knative queue-proxy " + knativeVersion + ", cc=10",
}

// knativeVersion is the knative.dev/serving release hack/knative builds.
const knativeVersion = "v0.42.2"

// paths are the servers behind every path, on loopback: in this process,
// and the proxy processes once startProcs ran; close stops them all.
type paths struct {
	list    []path
	targets *queuebench.Targets
	servers []*http.Server
	procs   []*proxyProc
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// startPaths starts the app, the bare proxy and the queue-proxies
// (queuebench), then an activator that knows the cc=0 queue-proxy as the
// one replica of proxyRevision, and an ingress router whose table, built
// from a Route and EndpointSlices as the control plane writes them,
// sends serveHost to the queue-proxy and proxyHost to the activator.
func startPaths() (*paths, error) {
	targets, err := queuebench.Start()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &paths{targets: targets, cancel: cancel}
	var queueAddr string
	for _, t := range targets.List() {
		p.list = append(p.list, path{name: t.Name, label: labels[t.Name], url: t.URL})
		if t.Name == queuebench.QueueCC0 {
			queueAddr = strings.TrimPrefix(t.URL, "http://")
		}
	}

	// The ingress signs each request's Revision and the activator checks
	// it, as in knit dev and on a cluster: their cost is on the path.
	keys := hopauth.Generate()
	act, err := activator.New(activator.Options{Registry: prometheus.NewRegistry(), RouteKeys: keys})
	if err != nil {
		p.close()
		return nil, err
	}
	p.wg.Go(func() { act.Start(ctx) }) // the stats loop, as in knit dev
	actAddr, err := p.serve(act)
	if err != nil {
		p.close()
		return nil, err
	}
	act.SetEndpoints(types.NamespacedName{Namespace: benchNamespace, Name: proxyRevision}, 0, []string{queueAddr})

	router := ingress.NewRouter()
	router.SignRoutes(keys)
	router.Update(ingress.Options{}.Build(
		[]servingv1.Route{benchRoute("bench", serveHost, serveRevision), benchRoute("bench-act", proxyHost, proxyRevision)},
		[]discoveryv1.EndpointSlice{benchSlice(serveRevision, queueAddr), benchSlice(proxyRevision, actAddr)},
	))
	ingressAddr, err := p.serve(router)
	if err != nil {
		p.close()
		return nil, err
	}
	p.list = append(p.list,
		path{name: pathIngressQueue, label: labels[pathIngressQueue], url: "http://" + ingressAddr + "/", host: serveHost},
		path{name: pathIngressActivator, label: labels[pathIngressActivator], url: "http://" + ingressAddr + "/", host: proxyHost},
	)
	// The activator holds the first request until its probe of the
	// queue-proxy passes.
	if err := p.check(activatorTimeout); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// check sends one request down every path.
func (p *paths) check(timeout time.Duration) error {
	for _, pa := range p.list {
		req, err := queuebench.NewRequest(pa.url, pa.host, nil)
		if err != nil {
			return err
		}
		c := queuebench.NewConn(req, time.Now().Add(timeout))
		err = c.Do()
		c.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", pa.label, err)
		}
	}
	return nil
}

// serve runs h on a loopback port the way knit dev serves the ingress
// and the activator: HTTP/1.1 and h2c.
func (p *paths) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	p.servers = append(p.servers, srv)
	p.wg.Go(func() { srv.Serve(ln) })
	return ln.Addr().String(), nil
}

// close stops every server and process and waits for their goroutines.
func (p *paths) close() error {
	for _, pr := range p.procs {
		pr.stop()
	}
	for _, srv := range p.servers {
		srv.Close()
	}
	p.cancel()
	p.wg.Wait()
	return errors.Join(p.targets.Close())
}

// benchRoute is a Route as the route reconciler leaves it: all traffic
// to one Revision, reached at host.
func benchRoute(name, host, revision string) servingv1.Route {
	rt := servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name}}
	rt.Status.URL = "http://" + host
	rt.Status.Traffic = []servingv1.TrafficTarget{{RevisionName: revision, Percent: ptr.To[int64](100)}}
	return rt
}

// benchSlice is a Revision's public EndpointSlice as knit dev writes it:
// one ready endpoint, 127.0.0.1 as an FQDN, the port named http, managed
// by knit dev's runtime (the ingress dials only slices a trusted manager
// wrote).
func benchSlice(revision, addr string) discoveryv1.EndpointSlice {
	_, portStr, _ := net.SplitHostPort(addr)
	var port int32
	fmt.Sscan(portStr, &port)
	return discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: revision + "-bench", Labels: map[string]string{
			discoveryv1.LabelServiceName: revision, discoveryv1.LabelManagedBy: "knit-local-runtime"}},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port)}},
	}
}
