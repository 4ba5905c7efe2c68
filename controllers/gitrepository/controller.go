package gitrepository

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/gitsync/plan"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// fieldOwner names knit's writes in managedFields: what Git owns.
const fieldOwner = client.FieldOwner("knit-gitsync")

// Announcer hears about syncs that failed, to tell the user's event sinks.
type Announcer interface {
	SyncFailed(ctx context.Context, repo *knitv1alpha1.GitRepository, c plan.Commit, err error)
}

// Options wire the reconciler to the rest of knit.
type Options struct {
	// Cache keeps the fetched repositories.
	Cache *gitsource.Cache
	// Announcer is told about failed syncs; nil for none.
	Announcer Announcer
	// Triggers wakes a repository at once (a push to knit's Git server, a
	// forge webhook); nil for none.
	Triggers <-chan event.GenericEvent
	// Workers is how many repositories sync at once. Default 4.
	Workers int
}

// Reconciler syncs GitRepositories.
type Reconciler struct {
	client    client.Client
	reader    client.Reader // uncached: Secrets are not worth a cluster-wide watch
	cache     *gitsource.Cache
	announcer Announcer
}

// SetupWithManager registers the reconciler. Besides its own resource it
// watches the PullRequests, Services and preview Revisions of each
// repository, so a new pull request, a Revision getting ready or failing
// moves the repository's status and traffic without waiting for a poll.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), cache: opts.Cache, announcer: opts.Announcer}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&knitv1alpha1.GitRepository{}).
		Watches(&knitv1alpha1.PullRequest{}, handler.EnqueueRequestsFromMapFunc(pullRequestRepo)).
		Watches(&servingv1.Service{}, handler.EnqueueRequestsFromMapFunc(labelledRepo)).
		Watches(&servingv1.Revision{}, handler.EnqueueRequestsFromMapFunc(labelledRepo)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers})
	if opts.Triggers != nil {
		b = b.WatchesRawSource(source.Channel(opts.Triggers, &handler.EnqueueRequestForObject{}))
	}
	return b.Complete(conflict.Requeue(r))
}

func pullRequestRepo(_ context.Context, obj client.Object) []reconcile.Request {
	pr, ok := obj.(*knitv1alpha1.PullRequest)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pr.Namespace, Name: pr.Spec.Repository}}}
}

func labelledRepo(_ context.Context, obj client.Object) []reconcile.Request {
	repo := obj.GetLabels()[plan.RepositoryLabel]
	if repo == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: repo}}}
}
