package dev

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/platform"
)

// localDomain makes every Route reachable without DNS setup:
// *.localhost resolves to loopback.
const localDomain = "localhost"

// queueImage tells the local runtime to run this binary's queue-proxy.
const queueImage = "knit://queue"

// queueEnv adapts the queue-proxy to local replicas: bind only the pod's
// own address (127.0.0.1 in the shared network, where the replicas share
// loopback; the veth's end in an isolated one, the only address the
// ingress and activator reach it on), and drain in a second rather than
// Kubernetes' 15 s, since no kube-proxy needs time to forget the endpoint.
var queueEnv = []corev1.EnvVar{
	{Name: "QUEUE_LISTEN_HOST", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
	{Name: "QUEUE_DRAIN_QUIET_PERIOD_SECONDS", Value: "1"},
}

// RestartedLine is printed once restarted controllers have read the API
// again; scripts and tests wait for it after a SIGHUP.
const RestartedLine = "knit dev: controllers restarted"

// controllers are knit's reconcilers, what `knit controller` runs on a
// cluster, on a manager of their own: a restart replaces that manager
// while the data plane, on another, keeps serving. Nothing of theirs
// outlives a run but what is stored in the API.
type controllers struct {
	config  *rest.Config
	scheme  *k8sruntime.Scheme
	options platform.ControlPlaneOptions
	out     io.Writer
}

// run runs the controllers until ctx ends or their manager fails, and
// replaces them with new ones at every receive from restart.
func (c *controllers) run(ctx context.Context, restart <-chan struct{}) error {
	for restarts := 0; ; restarts++ {
		again, err := c.runOnce(ctx, restart, restarts > 0)
		if err != nil || !again {
			return err
		}
		slog.Info("Restarting the controllers")
	}
}

// runOnce is one run of the controllers. again reports a restart.
func (c *controllers) runOnce(ctx context.Context, restart <-chan struct{}, announce bool) (again bool, err error) {
	mgr, err := ctrl.NewManager(c.config, ctrl.Options{
		Scheme:                 c.scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// The same controllers are registered again at each restart.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return false, fmt.Errorf("controller manager: %w", err)
	}
	cp, err := platform.SetupControlPlane(mgr, c.options)
	if err != nil {
		return false, err
	}
	defer cp.Close()

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	if announce {
		go func() {
			if mgr.GetCache().WaitForCacheSync(runCtx) {
				fmt.Fprintln(c.out, RestartedLine)
			}
		}()
	}
	select {
	case err := <-done:
		if err != nil {
			return false, fmt.Errorf("controller manager: %w", err)
		}
		return false, nil
	case <-ctx.Done():
	case <-restart:
		again = true
	}
	stop()
	if err := <-done; err != nil {
		return false, fmt.Errorf("controller manager: %w", err)
	}
	return again && ctx.Err() == nil, nil
}

// ensureSystemNamespace creates knit-system, where knit's ConfigMaps and
// the activator's endpoints live, and Knative's ConfigMaps in it that are
// missing, empty (every key at its default), as the chart installs them:
// `kubectl edit cm config-autoscaler -n knit-system` finds one to edit, and
// tools and tests that read them (Knative's e2e tests read
// config-autoscaler) find them. One a user wrote is never touched.
func ensureSystemNamespace(ctx context.Context, c client.Client) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.SystemNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", config.SystemNamespace, err)
	}
	for _, name := range config.ConfigMapNames() {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: name,
			Labels: map[string]string{"app.kubernetes.io/part-of": "knit"}}, Data: map[string]string{}}
		if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ConfigMap %s/%s: %w", config.SystemNamespace, name, err)
		}
	}
	return nil
}
