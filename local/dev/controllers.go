package dev

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/announce"
	"github.com/knitops/knit/controllers/configuration"
	"github.com/knitops/knit/controllers/gc"
	"github.com/knitops/knit/controllers/gitrepository"
	"github.com/knitops/knit/controllers/podautoscaler"
	"github.com/knitops/knit/controllers/revision"
	"github.com/knitops/knit/controllers/route"
	"github.com/knitops/knit/controllers/serverlessservice"
	"github.com/knitops/knit/controllers/service"
	"github.com/knitops/knit/dataplane/activator"
	"github.com/knitops/knit/dataplane/autoscaler"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/dataplane/kpa"
	"github.com/knitops/knit/local/runtime"
)

// localDomain makes every Route reachable without DNS setup:
// *.localhost resolves to loopback.
const localDomain = "localhost"

// activatorService is where the activators publish their endpoints.
var activatorService = serverlessservice.Activator{Namespace: config.SystemNamespace, Service: "knit-activator"}

// queueImage tells the local runtime to run this binary's queue-proxy.
const queueImage = "knit://queue"

// queueEnv adapts the queue-proxy to replicas that share loopback: bind
// only 127.0.0.1, and drain in a second rather than Kubernetes' 15 s, since
// no kube-proxy needs time to forget the endpoint.
var queueEnv = []corev1.EnvVar{
	{Name: "QUEUE_LISTEN_HOST", Value: "127.0.0.1"},
	{Name: "QUEUE_DRAIN_QUIET_PERIOD_SECONDS", Value: "1"},
}

// setupControllers registers every reconciler knit dev runs, in the order
// a Service flows through them, and the local runtime that runs the
// Deployments they create.
func setupControllers(mgr ctrl.Manager, opts Options, store *config.Store, router *ingress.Router, ingressAddr string,
	git *gitPlane, announcer *announce.Announcer, act *activatorPlane) error {
	_, portStr, _ := net.SplitHostPort(ingressAddr)
	port, _ := strconv.Atoi(portStr)
	rt, err := runtime.New(runtime.Options{StateDir: opts.StateDir, SourceDir: git.sourceDir})
	if err != nil {
		return fmt.Errorf("local runtime: %w", err)
	}
	scaler := kpa.New(func() *autoscaler.Config { return store.Load().Autoscaler }, mgr.GetClient())
	activate, err := activator.New(activator.Options{Reporter: scaler, Registry: metrics.Registry, Logger: slog.Default()})
	if err != nil {
		return fmt.Errorf("activator: %w", err)
	}
	act.srv.Handler = activate
	steps := []struct {
		name  string
		setup func() error
	}{
		{"config", func() error { return store.SetupWithManager(mgr) }},
		{"service", func() error { return service.SetupWithManager(mgr) }},
		{"configuration", func() error { return configuration.SetupWithManager(mgr) }},
		{"revision", func() error { return revision.SetupWithManager(mgr, store, queueImage, queueEnv...) }},
		{"autoscaler", func() error { return mgr.Add(scaler) }},
		{"podautoscaler", func() error { return podautoscaler.SetupWithManager(mgr, scaler, scaler.Wakes()) }},
		{"activator", func() error { return activate.SetupWithManager(mgr) }},
		{"serverlessservice", func() error { return serverlessservice.SetupWithManager(mgr, activatorService) }},
		{"route", func() error { return route.SetupWithManager(mgr, store, port) }},
		{"revision-gc", func() error { return gc.SetupWithManager(mgr, store) }},
		{"ingress", func() error { return ingress.SetupWithManager(mgr, router) }},
		{"local runtime", func() error { return rt.SetupWithManager(mgr) }},
		{"gitrepository", func() error {
			return gitrepository.SetupWithManager(mgr, gitrepository.Options{Cache: git.cache, Announcer: announcer, Triggers: git.triggers})
		}},
		{"announce", func() error { return announcer.SetupWithManager(mgr) }},
	}
	for _, s := range steps {
		if err := s.setup(); err != nil {
			return fmt.Errorf("%s controller: %w", s.name, err)
		}
	}
	return nil
}

// ensureSystemNamespace creates knit-system, where knit's ConfigMaps and
// the activator's endpoints live.
func ensureSystemNamespace(ctx context.Context, c client.Client) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.SystemNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", config.SystemNamespace, err)
	}
	return nil
}
