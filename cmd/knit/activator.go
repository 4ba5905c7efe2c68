package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/dataplane/activator"
)

// runActivator runs the activator standalone against a cluster: Revisions
// and EndpointSlices from its API, load and pokes posted to the
// autoscaler. SIGTERM stops accepting, lets requests finish, exits 0.
func runActivator(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("knit activator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig `file`; empty for $KUBECONFIG, in-cluster or ~/.kube/config")
	listen := fs.String("listen", ":8012", "`address` requests arrive on (HTTP/1.1 and h2c)")
	metricsListen := fs.String("metrics-listen", ":9090", "`address` of /metrics and /healthz; empty for none")
	autoscalerURL := fs.String("autoscaler-url", "", "base `URL` of the autoscaler (POST <url>"+activator.StatsPath+", <url>"+activator.PokePath+"); empty reports nothing")
	name := fs.String("name", os.Getenv("POD_NAME"), "this activator's name in its reports ($POD_NAME)")
	maxWaiting := fs.Int("max-waiting", activator.DefaultMaxWaiting, "requests that may wait per revision")
	maxWait := fs.Duration("max-wait", activator.DefaultMaxWait, "longest a request waits for a replica (a revision's shorter timeoutSeconds wins)")
	verbosity := fs.Int("v", 0, "log verbosity (0 warnings, 1 lifecycle, 2+ debug)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	setupLogging(stderr, *verbosity)
	level := slog.LevelWarn
	if *verbosity > 0 {
		level = slog.Level(1 - *verbosity)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	mgr, err := newManager(*kubeconfig, "0")
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts := activator.Options{Registry: reg, MaxWaiting: *maxWaiting, MaxWait: *maxWait, Logger: log}
	if *autoscalerURL != "" {
		rep, err := activator.NewHTTPReporter(*autoscalerURL, *name, log)
		if err != nil {
			return err
		}
		if err := mgr.Add(rep); err != nil {
			return err
		}
		opts.Reporter = rep
	} else {
		log.Warn("No --autoscaler-url: revisions at zero are not woken by this activator")
	}
	act, err := activator.New(opts)
	if err != nil {
		return err
	}
	if err := act.SetupWithManager(mgr); err != nil {
		return err
	}

	serving := &http.Server{Handler: act, ReadHeaderTimeout: time.Minute, Protocols: new(http.Protocols),
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	serving.Protocols.SetHTTP1(true)
	serving.Protocols.SetUnencryptedHTTP2(true)
	servers := []*http.Server{serving}
	listeners := []string{*listen}
	if *metricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
		servers = append(servers, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second})
		listeners = append(listeners, *metricsListen)
	}
	lns := make([]net.Listener, 0, len(listeners))
	for _, addr := range listeners {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return err
		}
		lns = append(lns, ln)
	}

	// The manager outlives the servers' drain: waiting requests need
	// endpoint updates until they are answered.
	mgrCtx, stopMgr := context.WithCancel(context.Background())
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	defer func() { stopMgr(); <-mgrDone }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		for _, ln := range lns {
			ln.Close()
		}
		return errors.New("stopped before the cache synced")
	}
	log.Info("Serving", "listen", lns[0].Addr().String(), "autoscaler", *autoscalerURL)
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() {
			if err := srv.Serve(lns[i]); !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	case runErr = <-mgrDone:
		mgrDone <- runErr // for the deferred wait
		if runErr == nil {
			runErr = errors.New("the manager stopped")
		}
	}
	log.Info("Shutting down: letting requests finish", "limit", *maxWait)
	shutdownCtx, stop := context.WithTimeout(context.Background(), *maxWait)
	defer stop()
	for _, srv := range servers {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			srv.Close()
		}
	}
	return runErr
}

// newManager is the controller manager of a knit component that runs on
// its own against a cluster (activator, autoscaler): knit's scheme, the
// kubeconfig given or found the usual way, metrics served on metricsAddr
// ("0": off), no health probes (the component serves its own).
func newManager(kubeconfig, metricsAddr string) (ctrl.Manager, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme, err := api.NewScheme()
	if err != nil {
		return nil, err
	}
	return ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: metricsAddr}, HealthProbeBindAddress: "0"})
}

// restConfig loads the kubeconfig given, or finds one the usual way.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load --kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}
