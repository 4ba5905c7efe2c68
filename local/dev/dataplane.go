package dev

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"

	discoveryv1 "k8s.io/api/discovery/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/dataplane/activator"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/internal/hopauth"
	"github.com/knitops/knit/internal/localca"
	"github.com/knitops/knit/local/gateway"
	"github.com/knitops/knit/local/runtime"
	"github.com/knitops/knit/platform"
	"github.com/knitops/knit/webhooks"
)

// dataPlane is what knit dev keeps answering while its controllers
// restart, on a manager of its own for the life of the process: what a
// cluster runs beside `knit controller` (the ingress, the activator, the
// autoscaler that wakes a revision at zero, the Git server), where a
// cluster has kubelets the local runtime and its replicas, and the
// admission webhooks, so kubectl keeps working too. Every one of them
// reads config-* through the one Store this manager keeps up to date.
type dataPlane struct {
	store   *config.Store
	router  *ingress.Router
	git     *gitPlane
	act     *activatorPlane
	adm     *admissionServer
	network runtime.Network  // where replicas listen
	rt      *runtime.Runtime // set by newManager
	oci     *runtime.OCI     // runs container images; nil: this machine cannot
	// ingress is served beside the manager, not by it: on the way out it
	// stops first and drains while the activator and the replicas its
	// requests are on still answer (see running.shutdown).
	ingress, gitSrv *platform.Server
	// https is the ingress over TLS, beside ingress and stopped with it;
	// ca issues its certificates for *.localhost.
	https *platform.Server
	ca    *localca.CA

	// routeKeys are the router's: the activator checks its signatures.
	routeKeys *hopauth.Keyring
}

// newManager builds the data plane's manager and registers everything on
// it; nothing runs until it starts.
func (p *dataPlane) newManager(cfg *rest.Config, scheme *k8sruntime.Scheme, opts Options) (ctrl.Manager, error) {
	metricsAddr := "0" // controller-runtime's "serve none"
	if opts.MetricsAddr != "" {
		metricsAddr = opts.MetricsAddr
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		// This manager outlives the controllers' restarts, and the
		// registry is the process's: the controllers' metrics are served
		// here too.
		Metrics:                metricsserver.Options{BindAddress: metricsAddr, ExtraHandlers: profilingHandlers()},
		HealthProbeBindAddress: "0",
		WebhookServer:          p.adm.server,
	})
	if err != nil {
		return nil, fmt.Errorf("data plane manager: %w", err)
	}
	var activate *activator.Activator // made below, before anything runs
	rt, err := runtime.New(runtime.Options{StateDir: opts.StateDir, SourceDir: p.git.sourceDir, Network: p.network, OCI: p.oci,
		Gateway: p.gateway(opts),
		// The activator probes a new replica when the runtime is about to
		// publish it, not after the write came back (ExpectSlices).
		ExpectSlices: func(svc types.NamespacedName, labels map[string]string, slices []discoveryv1.EndpointSlice) {
			activate.ExpectSlices(svc, labels, slices)
		}})
	if err != nil {
		return nil, fmt.Errorf("local runtime: %w", err)
	}
	p.rt = rt
	// The runtime hears of scale-ups from the autoscaler in process,
	// before they reach the API server (Runtime.HintScale).
	scaler, err := platform.SetupAutoscaler(mgr, p.store, rt)
	if err != nil {
		return nil, err
	}
	activate, err = activator.New(activator.Options{Reporter: scaler, Registry: metrics.Registry, Logger: slog.Default(), RouteKeys: p.routeKeys})
	if err != nil {
		return nil, fmt.Errorf("activator: %w", err)
	}
	p.act.srv.Server.Handler = activate
	for _, s := range []struct {
		name  string
		setup func() error
	}{
		{"config", func() error { return p.store.SetupWithManager(mgr) }},
		{"admission webhooks", func() error { return webhooks.Setup(mgr, webhooks.FromStore(p.store)) }},
		{"activator", func() error { return activate.SetupWithManager(mgr) }},
		{"ingress", func() error { return ingress.SetupWithManager(mgr, p.router) }},
		// With its claim binder: knit dev is the cluster's provisioner and
		// PV controller, every claim a directory in the state dir.
		{"local runtime", func() error { return rt.SetupWithManager(mgr) }},
		{"checkout collector", func() error {
			return mgr.Add(&checkoutGC{reader: mgr.GetClient(), srcRoot: p.git.srcRoot, log: mgr.GetLogger().WithName("checkouts")})
		}},
	} {
		if err := s.setup(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	for _, srv := range []*platform.Server{p.gitSrv, p.act.srv} {
		if err := mgr.Add(srv); err != nil {
			return nil, err
		}
	}
	p.git.SetClient(mgr.GetClient())
	return mgr, nil
}

// gateway is what an isolated replica finds at its gateway: DNS for the
// names the ingress serves and the ingress's internal listener, on port 80
// and on knit dev's ingress port (public URLs name it), so one app calls
// another by its in-cluster name or its URL, as on a cluster. Replicas
// in the shared network have none (this machine's DNS is theirs).
func (p *dataPlane) gateway(opts Options) runtime.Gateway {
	if p.network != runtime.NetworkIsolated {
		return nil
	}
	ports := []int{80}
	if _, port, err := net.SplitHostPort(opts.HTTPAddr); err == nil {
		if n, err := strconv.Atoi(port); err == nil && n != 80 && n != 0 {
			ports = append(ports, n)
		}
	}
	return gateway.New(gateway.Options{Handler: p.router.Internal(), Serves: p.router.Serves, Ports: ports,
		Upstream: gateway.Upstream("/etc/resolv.conf"), Log: slog.Default()})
}

// profilingHandlers serve Go's profiles beside the metrics (/debug/pprof/):
// where knit dev spends its CPU with a thousand Services is a question
// for `go tool pprof`, on the same loopback address the metrics take.
func profilingHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}
