package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/charts/knit/crds"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/local/statedir"
	"github.com/knitops/knit/platform"
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
	ingressSrv, err := listen("http", opts.HTTPAddr, router)
	if err != nil {
		return err
	}
	defer ingressSrv.Listener.Close()
	gitSrv, err := listen("git", opts.GitAddr, nil)
	if err != nil {
		return err
	}
	defer gitSrv.Listener.Close()
	git, err := newGitPlane(opts.StateDir, gitSrv.URL(), ctrl.Log)
	if err != nil {
		return err
	}
	defer git.Close()
	gitSrv.Server.Handler = git.Handler()
	act, err := listenActivator()
	if err != nil {
		return err
	}
	defer act.srv.Listener.Close()

	apiSrv, err := startAPI(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, apiSrv.stop()) }()

	return serve(ctx, opts, apiSrv, router, git, act, ingressSrv, gitSrv, out)
}

// serve runs everything that needs the API: CRDs, webhooks, and the
// manager with the servers, until ctx ends or one of them fails.
func serve(ctx context.Context, opts Options, apiSrv *apiServer, router *ingress.Router, git *gitPlane, act *activatorPlane,
	ingressSrv, gitSrv *platform.Server, out io.Writer) error {
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
	if err := ensureServiceRange(ctx, c); err != nil {
		return err
	}
	store, err := config.NewStore(localDomain)
	if err != nil {
		return err
	}
	if git.cache.Egress, err = gitEgress(apiSrv.config, store, gitSrv.URL()); err != nil {
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
	cp, err := setupComponents(mgr, opts, store, router, ingressSrv.Listener.Addr().String(), git, act)
	if err != nil {
		return err
	}
	defer cp.Close()
	if err := act.publish(ctx, c); err != nil {
		return err
	}
	for _, srv := range []*platform.Server{ingressSrv, gitSrv, act.srv} {
		if err := mgr.Add(srv); err != nil {
			return err
		}
	}
	git.SetClient(mgr.GetClient())

	mgrCtx, stopMgr := context.WithCancel(ctx)
	defer stopMgr()
	errc := make(chan error, 1)
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
	printBanner(out, banner{
		API: apiSrv.url, Kubeconfig: apiSrv.kubeconfig, Webhooks: adm.url,
		Ingress: ingressSrv.URL(), Git: gitSrv.URL(), CRDs: len(crdNames),
		GitToken: git.token, GitTokenFile: filepath.Join(opts.StateDir, gitTokenFile),
	})

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	return errors.Join(runErr, shutdown(adm, c, stopMgr, mgrDone))
}

// shutdown unregisters the webhooks while the API still answers, then
// stops the manager, which drains its servers, and waits for it.
func shutdown(adm *admissionServer, c client.Client, stopMgr context.CancelFunc, mgrDone <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := adm.unregister(ctx, c)
	stopMgr()
	select {
	case <-mgrDone:
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("controller manager did not stop within %s", shutdownTimeout))
	}
	return err
}
