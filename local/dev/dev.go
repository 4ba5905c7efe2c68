package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// stops everything it started, the control plane last. Every receive from
// opts.Restart replaces the controllers while the data plane serves on.
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
	act, err := listenActivator(opts.StateDir)
	if err != nil {
		return err
	}
	defer act.srv.Listener.Close()

	apiSrv, err := startAPI(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, apiSrv.stop()) }()

	dp := &dataPlane{router: router, git: git, act: act, servers: []*platform.Server{ingressSrv, gitSrv, act.srv}}
	return serve(ctx, opts, apiSrv, dp, out)
}

// serve runs everything that needs the API: CRDs, the data plane's
// manager and the controllers' (see controllers), until ctx ends or one
// of them fails.
func serve(ctx context.Context, opts Options, apiSrv *apiServer, dp *dataPlane, out io.Writer) error {
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
	if dp.store, err = config.NewStore(localDomain); err != nil {
		return err
	}
	ingressURL, gitURL := dp.servers[0].URL(), dp.servers[1].URL()
	if dp.git.cache.Egress, err = gitEgress(apiSrv.config, dp.store, gitURL); err != nil {
		return err
	}
	if dp.adm, err = newAdmissionServer(opts.StateDir, apiSrv.issuer); err != nil {
		return err
	}
	moved, err := dp.act.publish(ctx, c)
	if err != nil {
		return err
	}
	if err := settleEndpoints(ctx, c, moved); err != nil {
		return err
	}
	dpMgr, err := dp.newManager(apiSrv.config, scheme, opts)
	if err != nil {
		return err
	}
	ctrls := &controllers{config: apiSrv.config, scheme: scheme, out: out, options: platform.ControlPlaneOptions{
		Store: dp.store, StoreWatched: true, URLPort: dp.servers[0].Listener.Addr().(*net.TCPAddr).Port,
		QueueImage: queueImage, QueueEnv: queueEnv,
		GitCache: dp.git.cache, GitTriggers: dp.git.triggers, GitServer: dp.git.server(),
	}}

	r := startPlanes(ctx, dpMgr, ctrls, opts.Restart)
	var runErr error
	if runErr = dp.adm.register(ctx, c); runErr == nil {
		select {
		case <-dp.router.Loaded():
			printBanner(out, banner{
				API: apiSrv.url, Kubeconfig: apiSrv.kubeconfig, Webhooks: dp.adm.url,
				Ingress: ingressURL, Git: gitURL, CRDs: len(crdNames),
				GitToken: dp.git.token, GitTokenFile: filepath.Join(opts.StateDir, gitTokenFile),
			})
			select {
			case <-ctx.Done():
			case runErr = <-r.errc:
			}
		case <-ctx.Done():
		case runErr = <-r.errc:
		}
	}
	return errors.Join(runErr, r.shutdown(dp.adm, c))
}

// running is the two managers: the controllers', which restarts, and the
// data plane's, stopped only after the controllers.
type running struct {
	errc                 chan error
	stopCtrls, stopPlane context.CancelFunc
	ctrlsDone, planeDone chan struct{}
}

func startPlanes(ctx context.Context, dpMgr ctrl.Manager, ctrls *controllers, restart <-chan struct{}) *running {
	planeCtx, stopPlane := context.WithCancel(context.WithoutCancel(ctx))
	ctrlsCtx, stopCtrls := context.WithCancel(ctx)
	r := &running{errc: make(chan error, 2), stopCtrls: stopCtrls, stopPlane: stopPlane,
		ctrlsDone: make(chan struct{}), planeDone: make(chan struct{})}
	go func() {
		defer close(r.planeDone)
		if err := dpMgr.Start(planeCtx); err != nil {
			r.errc <- fmt.Errorf("data plane manager: %w", err)
		}
	}()
	go func() {
		defer close(r.ctrlsDone)
		if err := ctrls.run(ctrlsCtx, restart); err != nil {
			r.errc <- err
		}
	}()
	return r
}

// shutdown unregisters the webhooks while the API still answers, then
// stops the controllers and, once they are gone, the data plane, whose
// servers drain and whose runtime stops the replicas.
func (r *running) shutdown(adm *admissionServer, c client.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := adm.unregister(ctx, c)
	for _, m := range []struct {
		name string
		stop context.CancelFunc
		done <-chan struct{}
	}{{"controllers", r.stopCtrls, r.ctrlsDone}, {"data plane", r.stopPlane, r.planeDone}} {
		m.stop()
		select {
		case <-m.done:
		case <-ctx.Done():
			return errors.Join(err, fmt.Errorf("%s did not stop within %s", m.name, shutdownTimeout))
		}
	}
	return err
}
