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
	"github.com/knitops/knit/dataplane/activator"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/local/runtime"
	"github.com/knitops/knit/platform"
)

// localDomain makes every Route reachable without DNS setup:
// *.localhost resolves to loopback.
const localDomain = "localhost"

// queueImage tells the local runtime to run this binary's queue-proxy.
const queueImage = "knit://queue"

// queueEnv adapts the queue-proxy to replicas that share loopback: bind
// only 127.0.0.1, and drain in a second rather than Kubernetes' 15 s, since
// no kube-proxy needs time to forget the endpoint.
var queueEnv = []corev1.EnvVar{
	{Name: "QUEUE_LISTEN_HOST", Value: "127.0.0.1"},
	{Name: "QUEUE_DRAIN_QUIET_PERIOD_SECONDS", Value: "1"},
}

// setupComponents registers everything knit dev runs in one process: the
// control plane as on a cluster, plus what a cluster runs in its own
// Deployments (autoscaler, activator, ingress) and, where a cluster has
// kubelets, the local runtime that runs the Deployments as processes.
func setupComponents(mgr ctrl.Manager, opts Options, store *config.Store, router *ingress.Router, ingressAddr string,
	git *gitPlane, act *activatorPlane) (*platform.ControlPlane, error) {
	_, portStr, _ := net.SplitHostPort(ingressAddr)
	port, _ := strconv.Atoi(portStr)
	cp, err := platform.SetupControlPlane(mgr, platform.ControlPlaneOptions{
		Store: store, URLPort: port, QueueImage: queueImage, QueueEnv: queueEnv,
		GitCache: git.cache, GitTriggers: git.triggers, GitServer: git.server(), Webhooks: true,
	})
	if err != nil {
		return nil, err
	}
	scaler, err := platform.SetupAutoscaler(mgr, store)
	if err != nil {
		return nil, err
	}
	activate, err := activator.New(activator.Options{Reporter: scaler, Registry: metrics.Registry, Logger: slog.Default()})
	if err != nil {
		return nil, fmt.Errorf("activator: %w", err)
	}
	act.srv.Server.Handler = activate
	rt, err := runtime.New(runtime.Options{StateDir: opts.StateDir, SourceDir: git.sourceDir})
	if err != nil {
		return nil, fmt.Errorf("local runtime: %w", err)
	}
	for _, s := range []struct {
		name  string
		setup func() error
	}{
		{"activator", func() error { return activate.SetupWithManager(mgr) }},
		{"ingress", func() error { return ingress.SetupWithManager(mgr, router) }},
		{"local runtime", func() error { return rt.SetupWithManager(mgr) }},
	} {
		if err := s.setup(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return cp, nil
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
