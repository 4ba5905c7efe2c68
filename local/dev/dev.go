package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/charts/knit/crds"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/local/statedir"
)

// shutdownTimeout bounds how long Ctrl-C waits for in-flight work.
const shutdownTimeout = 20 * time.Second

// Run starts knit dev, prints the banner to out once everything answers,
// and blocks until ctx is cancelled (Ctrl-C) or a component fails; then it
// stops everything it started, the control plane last.
func Run(ctx context.Context, opts Options, out io.Writer) (err error) {
	opts.Defaults()
	if err := opts.Validate(); err != nil {
		return err
	}
	release, err := statedir.Lock(opts.StateDir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, release()) }()

	router := ingress.NewRouter()
	ingressLn, err := listen("http", opts.HTTPAddr, router)
	if err != nil {
		return err
	}
	defer ingressLn.ln.Close()
	gitServer, err := listen("git", opts.GitAddr, nil)
	if err != nil {
		return err
	}
	defer gitServer.ln.Close()
	git, err := newGitPlane(opts.StateDir, gitServer.URL(), ctrl.Log)
	if err != nil {
		return err
	}
	defer git.Close()
	gitServer.srv.Handler = git.Handler()
	act, err := listenActivator()
	if err != nil {
		return err
	}
	defer act.ln.Close()

	apiSrv, err := startAPI(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, apiSrv.stop()) }()

	return serve(ctx, opts, apiSrv, router, git, act, []*listener{ingressLn, gitServer}, out)
}

// serve runs everything that needs the API: CRDs, webhooks, the manager and
// the listeners, until ctx ends or one of them fails.
func serve(ctx context.Context, opts Options, apiSrv *apiServer, router *ingress.Router, git *gitPlane, act *activatorPlane,
	listeners []*listener, out io.Writer) error {
	scheme, err := api.NewScheme()
	if err != nil {
		return err
	}
	c, err := client.New(apiSrv.config, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("API client: %w", err)
	}
	crdNames, err := installCRDs(ctx, c, crds.FS)
	if err != nil {
		return err
	}
	if err := ensureSystemNamespace(ctx, c); err != nil {
		return err
	}
	store, err := config.NewStore(localDomain)
	if err != nil {
		return err
	}
	adm, err := newAdmissionServer(opts.StateDir, apiSrv.issuer)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(apiSrv.config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          adm.server,
	})
	if err != nil {
		return fmt.Errorf("controller manager: %w", err)
	}
	cp, err := setupComponents(mgr, opts, store, router, listeners[0].ln.Addr().String(), git, act)
	if err != nil {
		return err
	}
	defer cp.Close()
	if err := act.publish(ctx, c); err != nil {
		return err
	}
	listeners = append(listeners, &listener{name: "activator", ln: act.ln, srv: act.srv})
	git.SetClient(mgr.GetClient())

	mgrCtx, stopMgr := context.WithCancel(ctx)
	defer stopMgr()
	errc := make(chan error, 1+len(listeners))
	mgrDone := make(chan struct{})
	go func() {
		defer close(mgrDone)
		if err := mgr.Start(mgrCtx); err != nil {
			errc <- fmt.Errorf("controller manager: %w", err)
		}
	}()
	if err := adm.register(ctx, c); err != nil {
		return err
	}
	for _, l := range listeners {
		l.serve(errc)
	}
	printBanner(out, banner{
		API: apiSrv.url, Kubeconfig: apiSrv.kubeconfig, Webhooks: adm.url,
		Ingress: listeners[0].URL(), Git: listeners[1].URL(), CRDs: len(crdNames),
	})

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	return errors.Join(runErr, shutdown(adm, c, listeners, stopMgr, mgrDone))
}

// shutdown stops taking requests, unregisters the webhooks while the API
// still answers, then stops the manager and waits for it.
func shutdown(adm *admissionServer, c client.Client, listeners []*listener, stopMgr context.CancelFunc, mgrDone <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	var errs []error
	for _, l := range listeners {
		errs = append(errs, l.shutdown(ctx))
	}
	errs = append(errs, adm.unregister(ctx, c))
	stopMgr()
	select {
	case <-mgrDone:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("controller manager did not stop within %s", shutdownTimeout))
	}
	return errors.Join(errs...)
}
