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

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/charts/knit/crds"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/gitrepository"
	"github.com/knitops/knit/dataplane/forward"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/internal/hopauth"
	"github.com/knitops/knit/local/images"
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
	network, networkNote, err := replicaNetwork(opts.ReplicaNetwork)
	if err != nil {
		return err
	}

	// The ingress signs each request's Revision and the activator serves
	// only signed ones, as on a cluster; the key lives as long as the process.
	routeKeys := hopauth.Generate()
	router := ingress.NewRouter()
	router.SignRoutes(routeKeys)
	ingressSrv, err := listen("http", opts.HTTPAddr, router)
	if err != nil {
		return err
	}
	forward.DefaultLimits.Apply(ingressSrv.Server) // the ingress's limits, as on a cluster
	defer ingressSrv.Listener.Close()
	httpsSrv, ca, err := listenHTTPS(opts, router)
	if err != nil {
		return err
	}
	defer httpsSrv.Listener.Close()
	gitSrv, err := listen("git", opts.GitAddr, nil)
	if err != nil {
		return err
	}
	defer gitSrv.Listener.Close()
	git, err := newGitPlane(opts, gitSrv.URL(), ctrl.Log)
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

	oci, imagesNote := openImages(ctx, opts)
	if oci != nil {
		defer oci.Close()
	}
	dp := &dataPlane{router: router, routeKeys: routeKeys, git: git, act: act, ingress: ingressSrv, https: httpsSrv, ca: ca, gitSrv: gitSrv, network: network, oci: oci}
	return serve(ctx, opts, apiSrv, dp, out, networkNote, imagesNote)
}

// serve runs everything that needs the API: CRDs, the data plane's
// manager and the controllers' (see controllers), until ctx ends or one
// of them fails.
func serve(ctx context.Context, opts Options, apiSrv *apiServer, dp *dataPlane, out io.Writer, networkNote, imagesNote string) error {
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
	ingressURL, gitURL := dp.ingress.URL(), dp.gitSrv.URL()
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
	dp.git.cache.Retain = dp.git.retain(dpMgr.GetClient())
	builds, err := startBuilds(ctx, opts, apiSrv.config, c, scheme, dp.git)
	if err != nil {
		return err
	}
	defer builds.close()
	if apiSrv.own != nil {
		if err := startKubeletLogs(ctx, apiSrv.own, c, dp.rt, builds, ctrl.Log); err != nil {
			return err
		}
	}
	ctrls := &controllers{config: apiSrv.config, scheme: scheme, out: out, options: platform.ControlPlaneOptions{
		Store: dp.store, StoreWatched: true, URLPort: port(dp.ingress), URLPortTLS: port(dp.https), IngressURL: ingressURL, Ingress: dp.router,
		QueueImage: queueImage, QueueEnv: queueEnv,
		RegistryTransport: images.GuardPlainHTTP(nil, opts.PlainHTTPRegistries),
		GitCache:          dp.git.cache, GitTriggers: dp.git.triggers, GitServer: dp.git.server(),
		ImageBuilders: []gitrepository.ImageBuilder{builds},
	}}

	r := startPlanes(ctx, dpMgr, []*platform.Server{dp.ingress, dp.https}, ctrls, opts.Restart)
	var runErr error
	if runErr = dp.adm.register(ctx, c); runErr == nil {
		select {
		case <-dp.router.Loaded():
			printBanner(out, banner{
				API: apiSrv.url, Kubeconfig: apiSrv.kubeconfig, Webhooks: dp.adm.url,
				Ingress: ingressURL, HTTPS: dp.https.URL(), TrustHint: dp.ca.TrustHint(port(dp.https)), Git: gitURL, CRDs: len(crdNames), Replicas: networkNote, Images: imagesNote,
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

// running is the two managers, the controllers' (which restarts) and the
// data plane's, and the ingress in front of them.
type running struct {
	errc  chan error
	parts []runningPart // in the order they stop
}

type runningPart struct {
	name string
	stop context.CancelFunc
	done chan struct{}
}

func startPlanes(ctx context.Context, dpMgr ctrl.Manager, ingress []*platform.Server, ctrls *controllers, restart <-chan struct{}) *running {
	r := &running{errc: make(chan error, 2+len(ingress))}
	run := func(name string, parent context.Context, f func(context.Context) error) {
		ctx, stop := context.WithCancel(parent)
		part := runningPart{name: name, stop: stop, done: make(chan struct{})}
		r.parts = append(r.parts, part)
		go func() {
			defer close(part.done)
			if err := f(ctx); err != nil {
				r.errc <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	// Only the controllers follow ctx at once; the rest stop in shutdown.
	run("controllers", ctx, func(ctx context.Context) error { return ctrls.run(ctx, restart) })
	for _, srv := range ingress {
		run(srv.Name, context.WithoutCancel(ctx), srv.Start)
	}
	run("data plane", context.WithoutCancel(ctx), dpMgr.Start)
	return r
}

// shutdown unregisters the webhooks while the API still answers, then
// stops the controllers; the ingress, which stops taking requests and
// finishes those it has while the activator and the replicas still
// answer them; and the data plane, whose runtime stops the replicas.
func (r *running) shutdown(adm *admissionServer, c client.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := adm.unregister(ctx, c)
	for _, p := range r.parts {
		p.stop()
		select {
		case <-p.done:
		case <-ctx.Done():
			return errors.Join(err, fmt.Errorf("%s did not stop within %s", p.name, shutdownTimeout))
		}
	}
	return err
}
