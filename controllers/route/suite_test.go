//go:build !unit

package route

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/internal/poll"
)

// startRoutes starts a kube-apiserver with knit's CRDs and a manager that
// runs the Route reconciler alone, counting its reconciles per Route. The
// test plays every other controller: it writes Configurations' and
// Revisions' status itself, so the only writer it races is the Route
// reconciler. Not in the unit build (make test-unit).
func startRoutes(t *testing.T) (client.Client, *counter) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run through `make test`, which builds kube-apiserver and etcd into ./bin")
	}
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "charts", "knit", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// -count=N starts a manager per run in one process.
		Controller: crconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	store, err := config.NewStore("localhost")
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{client: mgr.GetClient(), config: store, urlPort: 8080, internalIngress: testInternalIngress}
	counts := &counter{next: conflict.Requeue(r), n: map[types.NamespacedName]int{}}
	if err := r.setup(mgr, counts); err != nil {
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
	return k8s, counts
}

// counter is the Route reconciler with a count of its calls per Route.
type counter struct {
	next reconcile.Reconciler
	mu   sync.Mutex
	n    map[types.NamespacedName]int
}

func (c *counter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	c.mu.Lock()
	c.n[req.NamespacedName]++
	c.mu.Unlock()
	return c.next.Reconcile(ctx, req)
}

// in returns the counts of the Routes of namespace ns, by name.
func (c *counter) in(ns string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		if k.Namespace == ns {
			out[k.Name] = v
		}
	}
	return out
}

// eventually polls cond until it holds or 30 s pass.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	poll.Until(t, what, 50*time.Millisecond, 30*time.Second, cond)
}
