package gitrepository

import (
	"context"
	"net/http"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/gitsync/egress"
	"github.com/knitops/knit/gitsync/githubapp"
	"github.com/knitops/knit/gitsync/plan"
	gitsource "github.com/knitops/knit/gitsync/source"
	"github.com/knitops/knit/gitsync/stepper"
	"github.com/knitops/knit/internal/endpointslices"
)

// fieldOwner names knit's writes in managedFields: what Git owns.
const fieldOwner = client.FieldOwner("knit-gitsync")

// Announcer hears about syncs that failed, to tell the user's event sinks.
type Announcer interface {
	SyncFailed(ctx context.Context, repo *knitv1alpha1.GitRepository, c plan.Commit, err error)
	// RolloutFailed: a push's rollout failed a step (or its Revision
	// failed) and the stable Revision has all the traffic again.
	RolloutFailed(ctx context.Context, repo *knitv1alpha1.GitRepository, ro knitv1alpha1.RolloutStatus)
}

// Options wire the reconciler to the rest of knit.
type Options struct {
	// Cache keeps the fetched repositories.
	Cache *gitsource.Cache
	// Announcer is told about failed syncs; nil for none.
	Announcer Announcer
	// Triggers wakes a repository at once and makes it fetch (a push to
	// knit's Git server, a forge webhook); nil for none.
	Triggers <-chan event.GenericEvent
	// Workers is how many repositories sync at once. Default 4.
	Workers int
	// Builder builds ko:// images on the cluster (package build); nil
	// leaves them as they are, for a runtime that builds them itself
	// (knit dev). Its Jobs are watched: one finishing wakes its repository.
	Builder *build.Builder
	// Builders build the other source images (knit dev's BuildKit for
	// dockerfile://); each wakes a repository whose build ended through
	// Triggers. Asked after Builder, in order.
	Builders []ImageBuilder
	// GitServer is knit's Git server, whose token fetches from it carry;
	// nil for none.
	GitServer *GitServer
	// Identity bounds what every sync writes: whom it writes as when its
	// GitRepository names no ServiceAccount, and the kinds any may allow.
	Identity Identity
	// GitHubApps exchanges GitHub App credentials for installation
	// tokens; nil makes one whose requests obey Cache's egress policy.
	GitHubApps *githubapp.Tokens
	// Forges returns the forge client a repository's deploys are reported
	// to (the knit/deploy commit status, deploystatus.go), nil when it has
	// none (no forge provider, no API token): pullrequest.ForgeFromSecret,
	// as the pull requests' reconciler uses. nil reports nothing.
	Forges func(ctx context.Context, repo *knitv1alpha1.GitRepository) (Forge, error)
	// Metrics reads a Revision's queue-proxy counters, which a push's
	// rollout is judged on. Default: stepper.MetricsFromEndpoints over the
	// manager's client.
	Metrics stepper.Metrics
}

// Reconciler syncs GitRepositories.
type Reconciler struct {
	client    client.Client
	reader    client.Reader // uncached: Secrets are not worth a cluster-wide watch
	cache     *gitsource.Cache
	announcer Announcer
	memory    *memory
	now       func() time.Time
	builders  []ImageBuilder
	events    events.EventRecorder
	gitServer *GitServer
	// identities impersonate the ServiceAccounts GitRepositories name
	// (identity.go).
	identities *identities
	// allowedKinds is the operator's ceiling on spec.allowedKinds.
	allowedKinds []string
	// githubApps turns GitHub App credentials into tokens.
	githubApps *githubapp.Tokens
	// forges makes the client deploys are reported with; nil for none.
	forges func(ctx context.Context, repo *knitv1alpha1.GitRepository) (Forge, error)
	// metrics and windows judge the steps of pushes' rollouts.
	metrics stepper.Metrics
	windows *stepper.Windows[rolloutKey]
	// passed, when set, hears of each pass that ran to its end (status
	// written, deploys reported) with the pull requests it read. Nothing
	// else shows a pass that changed nothing, and tests must wait for
	// the pass that follows their writes to count what it cost.
	passed func(repo *knitv1alpha1.GitRepository, prs []knitv1alpha1.PullRequest)
}

// SetupWithManager registers the reconciler. Besides its own resource it
// watches the PullRequests, Services and Revisions of each repository,
// through predicates that pass only what a pass reads (predicates.go): a
// pull request's spec or share of traffic, a preview getting ready or
// failing, the Service and Revision status the roll-up reports. None of
// them fetches; only what changes the render applies.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	return newReconciler(mgr, &opts).setup(mgr, opts)
}

// newReconciler is a reconciler that remembers nothing yet, as after a
// start; it fills opts' defaults.
func newReconciler(mgr ctrl.Manager, opts *Options) *Reconciler {
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.GitHubApps == nil {
		opts.GitHubApps = githubapp.New(&http.Client{Transport: egress.Transport(opts.Cache.Egress), Timeout: 30 * time.Second})
	}
	if opts.Metrics == nil {
		opts.Metrics = stepper.MetricsFromEndpoints(mgr.GetClient(), nil)
	}
	return &Reconciler{githubApps: opts.GitHubApps, client: mgr.GetClient(), reader: mgr.GetAPIReader(), cache: opts.Cache, announcer: opts.Announcer,
		memory: newMemory(), now: time.Now, builders: builders(*opts), events: mgr.GetEventRecorder("knit-gitsync"),
		gitServer: opts.GitServer, allowedKinds: opts.Identity.AllowedKinds, forges: opts.Forges,
		metrics: opts.Metrics, windows: stepper.NewWindows[rolloutKey](),
		identities: newIdentities(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()}, opts.Identity.DefaultServiceAccount)}
}

// setup registers r with mgr's controllers and watches.
func (r *Reconciler) setup(mgr ctrl.Manager, opts Options) error {
	// The default Metrics reads the cache's index (registered once per
	// cache, whoever asks first).
	if err := endpointslices.Index(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&knitv1alpha1.GitRepository{}, builder.WithPredicates(repositoryChanged)).
		Watches(&knitv1alpha1.PullRequest{}, handler.EnqueueRequestsFromMapFunc(pullRequestRepo), builder.WithPredicates(pullRequestChanged)).
		Watches(&servingv1.Service{}, handler.EnqueueRequestsFromMapFunc(labelledRepo), builder.WithPredicates(labelled, serviceChanged)).
		Watches(&servingv1.Revision{}, handler.EnqueueRequestsFromMapFunc(labelledRepo), builder.WithPredicates(labelled, readinessChanged)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers})
	if opts.Builder != nil {
		b = b.Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(builtRepo), builder.WithPredicates(buildFinished))
	}
	if opts.Triggers != nil {
		b = b.WatchesRawSource(source.Channel(opts.Triggers, r.triggerHandler()))
	}
	return b.Complete(conflict.Requeue(r))
}

// builders are opts' builders in the order they are asked.
func builders(opts Options) []ImageBuilder {
	var out []ImageBuilder
	if opts.Builder != nil {
		out = append(out, opts.Builder)
	}
	return append(out, opts.Builders...)
}

// triggerHandler enqueues a triggered repository and remembers that it
// was triggered, so that its next pass fetches.
func (r *Reconciler) triggerHandler() handler.EventHandler {
	return handler.Funcs{GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		key := client.ObjectKeyFromObject(e.Object)
		r.memory.trigger(key)
		q.Add(reconcile.Request{NamespacedName: key})
	}}
}

func pullRequestRepo(_ context.Context, obj client.Object) []reconcile.Request {
	pr, ok := obj.(*knitv1alpha1.PullRequest)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pr.Namespace, Name: pr.Spec.Repository}}}
}

// builtRepo is the repository a build Job is for; the Job lives in the
// build namespace, so labels name it rather than an owner reference.
func builtRepo(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[build.BuildLabel] == "" || l[build.RepositoryLabel] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l[build.RepositoryNamespaceLabel], Name: l[build.RepositoryLabel]}}}
}

func labelledRepo(_ context.Context, obj client.Object) []reconcile.Request {
	repo := obj.GetLabels()[plan.RepositoryLabel]
	if repo == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: repo}}}
}
