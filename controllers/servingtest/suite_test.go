//go:build !unit

package servingtest

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/configuration"
	"github.com/knitops/knit/controllers/gc"
	"github.com/knitops/knit/controllers/podautoscaler"
	"github.com/knitops/knit/controllers/revision"
	"github.com/knitops/knit/controllers/route"
	"github.com/knitops/knit/controllers/serverlessservice"
	"github.com/knitops/knit/controllers/service"
	"github.com/knitops/knit/internal/poll"
)

var (
	k8s client.Client
	cfg *rest.Config
)

const ingressPort = 8080

var activator = serverlessservice.Activator{Namespace: "knit-system", Service: "knit-activator"}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run through `make test`, which builds kube-apiserver and etcd into ./bin")
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "charts", "knit", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "start envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if k8s, err = startManager(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// startManager runs the serving reconcilers against the API server cfg
// reaches until ctx ends, and returns a client of it.
func startManager(ctx context.Context, cfg *rest.Config) (client.Client, error) {
	scheme, err := api.NewScheme()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		// Each manager of the package (a test may start its own API
		// server) registers its controllers under the same names.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		return nil, err
	}
	store, err := config.NewStore("localhost")
	if err != nil {
		return nil, err
	}
	for _, setup := range []func() error{
		func() error { return store.SetupWithManager(mgr) },
		func() error { return service.SetupWithManager(mgr) },
		func() error { return configuration.SetupWithManager(mgr) },
		func() error {
			return revision.SetupWithManager(mgr, store, revision.Options{QueueImage: "knit://queue"})
		},
		func() error { return podautoscaler.SetupWithManager(mgr, podautoscaler.StaticRecommender{}, nil, nil) },
		func() error { return serverlessservice.SetupWithManager(mgr, activator) },
		func() error { return route.SetupWithManager(mgr, store, route.Options{URLPort: ingressPort}) },
		func() error { return gc.SetupWithManager(mgr, store) },
	} {
		if err := setup(); err != nil {
			return nil, err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.SystemNamespace}}); err != nil {
		return nil, err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return c, nil
}

// eventually polls cond until it holds or 30 s pass, then fails with the
// last reason cond gave.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	poll.Until(t, what, 50*time.Millisecond, 30*time.Second, cond)
}
