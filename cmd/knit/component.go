package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/config"
)

// componentFlags are the flags every cluster component shares: how it
// reaches the API, where it serves probes and metrics, whether it elects a
// leader, how long it drains.
type componentFlags struct {
	kubeconfig  string
	metrics     string
	probes      string
	leaderElect bool
	drain       time.Duration
	verbosity   int
	// qps and burst are the client-side rate limit of the component's
	// API client (client-go's default is 5/s, bursts of 10).
	qps   float64
	burst int
}

// register adds the shared flags; leader says whether the component may
// elect one, drain whether it serves traffic that must be drained.
func (f *componentFlags) register(fs *flag.FlagSet, leader, drain bool) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig `file`; empty for $KUBECONFIG, in-cluster or ~/.kube/config")
	fs.StringVar(&f.metrics, "metrics-listen", ":9090", "`address` of Prometheus /metrics; 0 for none")
	fs.StringVar(&f.probes, "health-listen", ":8081", "`address` of /healthz and /readyz; 0 for none")
	fs.IntVar(&f.verbosity, "v", 0, "log verbosity (0 warnings, 1 lifecycle, 2+ debug)")
	fs.Float64Var(&f.qps, "kube-api-qps", 100, "requests per second to the Kubernetes API, at most (client-side; the API server's priority and fairness still applies)")
	fs.IntVar(&f.burst, "kube-api-burst", 200, "requests to the Kubernetes API in a burst above --kube-api-qps, at most")
	if leader {
		fs.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader among replicas (a Lease in "+config.SystemNamespace+"); only the leader reconciles")
	}
	if drain {
		fs.DurationVar(&f.drain, "drain-quiet-period", 0, "after SIGTERM, keep serving this long while /readyz fails, so endpoints forget this replica before it stops")
	}
}

// parse reads the command line, which holds flags only.
func (f *componentFlags) parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return nil
}

// newManager is a cluster component's controller manager: knit's scheme,
// the flags' API, probes and metrics, a leader election named leaderID
// when --leader-elect is on. tune adjusts the options (a webhook server,
// a cache scope) before the manager is made.
func (f *componentFlags) newManager(leaderID string, tune func(*ctrl.Options)) (ctrl.Manager, error) {
	cfg, err := restConfig(f.kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = float32(f.qps), f.burst
	scheme, err := api.NewScheme()
	if err != nil {
		return nil, err
	}
	opts := ctrl.Options{
		Scheme: scheme,
		// knit reads ConfigMaps only in its own namespace, and may read
		// nothing more: RBAC grants them there alone.
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{config.SystemNamespace: {}}},
		}},
		Metrics:                       metricsserver.Options{BindAddress: f.metrics},
		HealthProbeBindAddress:        f.probes,
		LeaderElection:                f.leaderElect,
		LeaderElectionID:              leaderID,
		LeaderElectionNamespace:       config.SystemNamespace,
		LeaderElectionReleaseOnCancel: true,
	}
	if tune != nil {
		tune(&opts)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("controller manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// restConfig loads the kubeconfig given, or finds one the usual way.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load --kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}

// addReadyChecks registers named readiness checks on the manager.
func addReadyChecks(mgr ctrl.Manager, checks map[string]healthz.Checker) error {
	for name, check := range checks {
		if err := mgr.AddReadyzCheck(name, check); err != nil {
			return fmt.Errorf("readiness check %s: %w", name, err)
		}
	}
	return nil
}

// cacheSynced is ready once the manager's informers have listed their
// kinds: before that a proxy would answer 404 for routes it just hasn't
// read yet.
func cacheSynced(mgr ctrl.Manager) healthz.Checker {
	return func(*http.Request) error {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("informer caches not synced yet")
		}
		return nil
	}
}

// elected is ready only on the leader: a Service over the replicas then
// reaches the one that acts (the autoscaler's stats receiver).
func elected(mgr ctrl.Manager) healthz.Checker {
	return func(*http.Request) error {
		select {
		case <-mgr.Elected():
			return nil
		default:
			return errors.New("not the leader")
		}
	}
}
