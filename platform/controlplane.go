package platform

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/announce"
	"github.com/knitops/knit/controllers/configuration"
	"github.com/knitops/knit/controllers/domainmapping"
	"github.com/knitops/knit/controllers/endpoints"
	"github.com/knitops/knit/controllers/gc"
	"github.com/knitops/knit/controllers/gitrepository"
	"github.com/knitops/knit/controllers/pullrequest"
	"github.com/knitops/knit/controllers/revision"
	"github.com/knitops/knit/controllers/route"
	"github.com/knitops/knit/controllers/serverlessservice"
	"github.com/knitops/knit/controllers/service"
	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/gitsync/egress"
	"github.com/knitops/knit/gitsync/events"
	"github.com/knitops/knit/gitsync/eventstore"
	"github.com/knitops/knit/gitsync/githubapp"
	gitsource "github.com/knitops/knit/gitsync/source"
	"github.com/knitops/knit/webhooks"
)

// ActivatorService is where the activators' endpoints are published in
// both modes: the EndpointSlices of knit-system/knit-activator.
var ActivatorService = serverlessservice.Activator{Namespace: config.SystemNamespace, Service: "knit-activator"}

// KnativeActivatorService is the activators' Service under Knative's name
// (networking.ActivatorServiceName), beside ActivatorService, for the
// tools that look for it there; knit's components read ActivatorService.
// On a cluster the chart installs it with the activators' selector; in
// knit dev, where ActivatorService has none, the endpoints package keeps
// it as an alias of ActivatorService.
const KnativeActivatorService = "activator-service"

// ControlPlaneOptions are what differs between knit dev and a cluster in
// the reconcilers' output: URLs, the queue-proxy, where Git lives.
type ControlPlaneOptions struct {
	// Store holds config-* from knit-system; it must be the one the
	// manager's other components read, so one edit reaches them all.
	Store *config.Store
	// StoreWatched says another manager of the same process keeps Store
	// up to date (knit dev's data plane, which outlives a restart of the
	// controllers), so this one registers no watcher of its own.
	StoreWatched bool
	// URLPort is shown in Route URLs when not 0 or 80: knit dev's ingress
	// port. 0 on a cluster, where the ingress Service listens on 80.
	URLPort int
	// URLPortTLS is shown in https:// Route URLs when not 0 or 443.
	URLPortTLS int
	// IngressURL is the ingress's plain-HTTP URL as the controller
	// reaches it, where ACME challenge responses are checked before the
	// CA validates them; "" skips the check.
	IngressURL string
	// InternalIngress is the DNS name of the ingress's internal listener,
	// which every Route's placeholder Services point at; "" makes none
	// (knit dev, which has no cluster DNS).
	InternalIngress string
	// Ingress is an ingress in this process that says which version of a
	// Route it serves (knit dev's router): Routes are Ready only once it
	// serves them. nil on a cluster.
	Ingress route.IngressState
	// QueueImage is the queue-proxy sidecar: "knit://queue" locally, an
	// image whose entrypoint is knit-queue on a cluster.
	QueueImage string
	// QueueEnv is added to every queue-proxy's environment.
	QueueEnv []corev1.EnvVar
	// RegistryTransport carries the Revision reconciler's requests to
	// registries (resolving tags to digests); nil: http.DefaultTransport.
	RegistryTransport http.RoundTripper
	// GitCache keeps fetched repositories for the GitRepository reconciler.
	// Without an Egress of its own it gets EgressPolicy's.
	GitCache *gitsource.Cache
	// Builds, when set, builds ko:// images of Git commits in Jobs and
	// pushes them to a registry (cluster mode); nil leaves ko:// images to
	// a runtime that builds them itself (knit dev). The manager's cache
	// must hold Jobs of Builds.Namespace.
	Builds *build.Config
	// ImageBuilders build the source images Builds does not (knit dev's
	// BuildKit for dockerfile://); they outlive the manager.
	ImageBuilders []gitrepository.ImageBuilder
	// GitServer is knit's Git server, whose token the GitRepository
	// reconciler presents when it fetches from it; nil for none.
	GitServer *gitrepository.GitServer
	// GitOpsIdentity bounds what GitOps syncs write: the default
	// ServiceAccount they impersonate and the kinds any may allow.
	GitOpsIdentity gitrepository.Identity
	// GitTriggers wakes a repository at once; nil when pushes reach the
	// reconciler through the API instead (the requested-at annotation).
	GitTriggers <-chan event.GenericEvent
	// Webhooks registers admission defaulting and validation on the
	// manager's webhook server.
	Webhooks bool
	// Logger receives the dispatcher's delivery logs; nil for slog's default.
	Logger *slog.Logger
}

// ControlPlane is what SetupControlPlane started that the caller must stop.
type ControlPlane struct {
	// Dispatcher delivers CloudEvents to EventSinks; Close it on exit so
	// queued events get a moment to leave (what does not stays saved for
	// the next start).
	Dispatcher *events.Dispatcher
}

// SetupControlPlane registers every reconciler of the serving and GitOps
// control plane on mgr, in the order a Service flows through them, plus
// the admission webhooks when asked. The autoscaler, the activator, the
// ingress and the local runtime are separate (SetupAutoscaler and the
// data-plane packages): on a cluster they run in their own Deployments.
func SetupControlPlane(mgr ctrl.Manager, opts ControlPlaneOptions) (*ControlPlane, error) {
	if opts.Store == nil || opts.GitCache == nil || opts.QueueImage == "" {
		return nil, errors.New("control plane: Store, GitCache and QueueImage are required")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	egressPolicy := EgressPolicy(mgr.GetConfig(), opts.Store)
	// Undelivered events wait in knit-system's ConfigMaps, in both modes:
	// knit dev keeps them in its etcd, a cluster's next leader finds them.
	store := &eventstore.ConfigMaps{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: config.SystemNamespace}
	dispatcher, err := events.NewDispatcher(events.Options{Registerer: metrics.Registry, Logger: logger, Egress: egressPolicy, Store: store})
	if err != nil {
		return nil, fmt.Errorf("event dispatcher: %w", err)
	}
	announcer := announce.New(mgr.GetClient(), dispatcher)
	if opts.GitCache.Egress == nil {
		opts.GitCache.Egress = egressPolicy
	}
	// One cache of GitHub App installation tokens for fetches and builds.
	githubApps := githubapp.New(&http.Client{Transport: egress.Transport(egressPolicy), Timeout: 30 * time.Second})
	var steps []step
	if !opts.StoreWatched {
		steps = append(steps, step{"config", func() error { return opts.Store.SetupWithManager(mgr) }})
	}
	steps = append(steps, []step{
		{"service", func() error { return service.SetupWithManager(mgr) }},
		{"configuration", func() error { return configuration.SetupWithManager(mgr) }},
		{"revision", func() error {
			return revision.SetupWithManager(mgr, opts.Store, revision.Options{QueueImage: opts.QueueImage, QueueEnv: opts.QueueEnv,
				RegistryTransport: opts.RegistryTransport})
		}},
		{"serverlessservice", func() error { return serverlessservice.SetupWithManager(mgr, ActivatorService) }},
		{"endpoints", func() error {
			return endpoints.SetupWithManager(mgr, endpoints.Alias{Namespace: ActivatorService.Namespace,
				Source: ActivatorService.Service, Name: KnativeActivatorService})
		}},
		{"route", func() error {
			return route.SetupWithManager(mgr, opts.Store, route.Options{URLPort: opts.URLPort, URLPortTLS: opts.URLPortTLS, IngressURL: opts.IngressURL,
				InternalIngress: opts.InternalIngress, Ingress: opts.Ingress})
		}},
		{"domainmapping", func() error {
			return domainmapping.SetupWithManager(mgr, opts.Store, domainmapping.Options{URLPort: opts.URLPort, URLPortTLS: opts.URLPortTLS,
				IngressURL: opts.IngressURL})
		}},
		{"revision-gc", func() error { return gc.SetupWithManager(mgr, opts.Store) }},
		{"gitrepository", func() error {
			builder, err := newBuilder(mgr, opts.Builds)
			if err != nil {
				return err
			}
			if builder != nil {
				builder.SetCredentialResolver(githubApps.Resolve)
			}
			return gitrepository.SetupWithManager(mgr, gitrepository.Options{Cache: opts.GitCache, Announcer: announcer, Triggers: opts.GitTriggers,
				Builder: builder, Builders: opts.ImageBuilders, GitServer: opts.GitServer, Identity: opts.GitOpsIdentity, GitHubApps: githubApps,
				Forges: deployForges(mgr.GetAPIReader(), egressPolicy, githubApps)})
		}},
		{"announce", func() error { return announcer.SetupWithManager(mgr) }},
		{"pullrequest", func() error {
			return pullrequest.SetupWithManager(mgr, pullrequest.Options{Announcer: announcer, Egress: egressPolicy, GitHubApps: githubApps})
		}},
	}...)
	if opts.Webhooks {
		steps = append(steps, step{"admission webhooks", func() error { return webhooks.Setup(mgr, webhooks.FromStore(opts.Store)) }})
	}
	if err := run(steps); err != nil {
		return nil, err
	}
	return &ControlPlane{Dispatcher: dispatcher}, nil
}

// step is one registration, named for the error that says which failed.
type step struct {
	name  string
	setup func() error
}

func run(steps []step) error {
	for _, s := range steps {
		if err := s.setup(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// Close gives queued CloudEvents a moment to reach their sinks.
func (cp *ControlPlane) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := cp.Dispatcher.Close(ctx); err != nil {
		slog.Warn("Events not delivered before exit", "err", err)
	}
}

// newBuilder is the builds' Builder, nil when cfg is.
func newBuilder(mgr ctrl.Manager, cfg *build.Config) (*build.Builder, error) {
	if cfg == nil {
		return nil, nil
	}
	return build.New(mgr.GetClient(), mgr.GetAPIReader(), *cfg)
}

// deployForges are the forge clients the GitRepository reconciler reports
// deploys with: the pull requests' (pullrequest.ForgeFromSecret), so both
// decide alike which repositories have one.
func deployForges(r client.Reader, policy func() *egress.Policy, apps *githubapp.Tokens) func(context.Context, *knitv1alpha1.GitRepository) (gitrepository.Forge, error) {
	forges := pullrequest.ForgeFromSecret(r, policy, apps)
	return func(ctx context.Context, repo *knitv1alpha1.GitRepository) (gitrepository.Forge, error) {
		f, err := forges(ctx, repo)
		if f == nil || err != nil {
			return nil, err
		}
		return f, nil
	}
}
