//go:build !unit

package domainmapping

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/internal/poll"
	"github.com/knitops/knit/internal/testapi"
)

// start runs a kube-apiserver with knit's CRDs and a manager with the
// DomainMapping reconciler alone; the test plays the Route and Service
// reconcilers by writing their status. Not in the unit build.
func start(t *testing.T) (client.Client, *config.Store) {
	t.Helper()
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	cfg := testapi.StartT(t, filepath.Join("..", "..", "charts", "knit", "crds"))
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: crconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	store, err := config.NewStore("localhost")
	if err != nil {
		t.Fatal(err)
	}
	if err := SetupWithManager(mgr, store, Options{URLPort: 8080, URLPortTLS: 8443}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return k8s, store
}

// eventually polls cond until it holds or 30 s pass.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	poll.Until(t, what, 50*time.Millisecond, 30*time.Second, cond)
}
