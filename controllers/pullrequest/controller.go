package pullrequest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/gitsync/canary"
	"github.com/knitops/knit/gitsync/egress"
	"github.com/knitops/knit/gitsync/forgeapi"
	"github.com/knitops/knit/gitsync/githubapp"
	"github.com/knitops/knit/gitsync/plan"
	prmodel "github.com/knitops/knit/gitsync/pullrequest"
	"github.com/knitops/knit/gitsync/stepper"
	"github.com/knitops/knit/internal/endpointslices"
)

// Forge is what the reconciler tells a pull request's forge.
type Forge interface {
	SetStatus(ctx context.Context, sha string, s forgeapi.Status) error
	UpsertComment(ctx context.Context, number int64, marker, body string) error
	// Merge merges number only if its head is still sha.
	Merge(ctx context.Context, number int64, sha string) error
}

// Announcer hears about canaries that failed, for the user's event sinks.
type Announcer interface {
	CanaryFailed(ctx context.Context, pr *knitv1alpha1.PullRequest, commit, revision, reason string)
}

// Options wire the reconciler to the rest of knit.
type Options struct {
	// Forges returns the forge client of a repository, nil when it has
	// none to report to (no provider, or no API token in its Secret).
	// Default: ForgeFromSecret over the manager's API reader.
	Forges func(ctx context.Context, repo *knitv1alpha1.GitRepository) (Forge, error)
	// Metrics reads a revision's queue-proxy metrics, per replica URL.
	// Default: stepper.MetricsFromEndpoints over the manager's client.
	Metrics func(ctx context.Context, namespace, revision string) (map[string]canary.Snapshot, error)
	// Egress is the policy forge API calls obey (statuses, comments,
	// merges): config-network's, so a repository URL on loopback, a
	// link-local address or the control plane gets no call unless the
	// operator allows it. nil refuses those addresses outright.
	// Used by the default Forges only.
	Egress func() *egress.Policy
	// GitHubApps exchanges GitHub App credentials for the API token of
	// the default Forges; nil leaves them unread.
	GitHubApps *githubapp.Tokens
	// Announcer is told about failed canaries; nil for none.
	Announcer Announcer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Reconciler writes pull requests' status, reports them to their forge
// and runs their canaries.
type Reconciler struct {
	client    client.Client
	forges    func(ctx context.Context, repo *knitv1alpha1.GitRepository) (Forge, error)
	metrics   func(ctx context.Context, namespace, revision string) (map[string]canary.Snapshot, error)
	announcer Announcer
	now       func() time.Time
	windows   *stepper.Windows[types.NamespacedName]
	// events records the canary's steps and outcome (canaryEvent).
	events events.EventRecorder
}

// SetupWithManager registers the reconciler. Besides PullRequests it
// watches what their status is computed from, so that it follows
// without a poll: their GitRepositories' status.previews (a preview
// deploying, ready or failed) and the base Services' routes (the tag's
// URL).
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	r := &Reconciler{client: mgr.GetClient(), forges: opts.Forges, metrics: opts.Metrics, announcer: opts.Announcer, now: opts.Now, windows: stepper.NewWindows[types.NamespacedName](),
		events: mgr.GetEventRecorder("knit-pullrequest")}
	if r.forges == nil {
		r.forges = ForgeFromSecret(mgr.GetAPIReader(), opts.Egress, opts.GitHubApps)
	}
	if r.metrics == nil {
		if err := endpointslices.Index(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
		r.metrics = stepper.MetricsFromEndpoints(mgr.GetClient(), nil)
	}
	if r.now == nil {
		r.now = time.Now
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &knitv1alpha1.PullRequest{}, repositoryIndex, repositoryOf); err != nil {
		return fmt.Errorf("index PullRequests by repository: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("pullrequest").
		For(&knitv1alpha1.PullRequest{}).
		Watches(&knitv1alpha1.GitRepository{}, handler.EnqueueRequestsFromMapFunc(r.pullRequestsOfRepository), builder.WithPredicates(previewsChanged)).
		Watches(&servingv1.Service{}, handler.EnqueueRequestsFromMapFunc(r.pullRequestsOfService), builder.WithPredicates(trafficChanged)).
		Complete(conflict.Requeue(r))
}

// repositoryIndex indexes PullRequests by spec.repository.
const repositoryIndex = "spec.repository"

func repositoryOf(obj client.Object) []string {
	pr, ok := obj.(*knitv1alpha1.PullRequest)
	if !ok {
		return nil
	}
	return []string{pr.Spec.Repository}
}

// pullRequestsOfRepository maps a GitRepository to its PullRequests.
func (r *Reconciler) pullRequestsOfRepository(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.pullRequestsOf(ctx, obj.GetNamespace(), obj.GetName(), "")
}

// pullRequestsOfService maps a Service deployed from a repository's
// branch to the PullRequests into that branch, whose tags it routes, and
// a preview Service to its PullRequest.
func (r *Reconciler) pullRequestsOfService(ctx context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if number, err := strconv.ParseInt(l[plan.PullRequestLabel], 10, 64); err == nil && l[plan.RepositoryLabel] != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: prmodel.Name(l[plan.RepositoryLabel], number)}}}
	}
	if l[plan.RepositoryLabel] == "" || l[plan.BranchLabel] == "" {
		return nil
	}
	return r.pullRequestsOf(ctx, obj.GetNamespace(), l[plan.RepositoryLabel], l[plan.BranchLabel])
}

// pullRequestsOf are the open PullRequests of repository, into base when
// it is not "". A closed one's status does not depend on either.
func (r *Reconciler) pullRequestsOf(ctx context.Context, namespace, repository, base string) []reconcile.Request {
	prs := &knitv1alpha1.PullRequestList{}
	if err := r.client.List(ctx, prs, client.InNamespace(namespace), client.MatchingFields{repositoryIndex: repository}); err != nil {
		log.FromContext(ctx).Error(err, "List PullRequests of a repository", "repository", repository)
		return nil
	}
	var out []reconcile.Request
	for i := range prs.Items {
		pr := &prs.Items[i]
		if isOpen(pr) && (base == "" || pr.Spec.BaseBranch == base) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pr)})
		}
	}
	return out
}

// previewsChanged passes what a PullRequest's status is computed from in
// its GitRepository: the previews, the tracked branches (spec) and the
// branches' sync errors, not the rest of its status.
var previewsChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, ok1 := e.ObjectOld.(*knitv1alpha1.GitRepository)
	now, ok2 := e.ObjectNew.(*knitv1alpha1.GitRepository)
	if !ok1 || !ok2 {
		return true
	}
	return old.Generation != now.Generation || !equality.Semantic.DeepEqual(old.Status.Previews, now.Status.Previews) ||
		!slices.Equal(branchErrors(old), branchErrors(now))
}}

func branchErrors(repo *knitv1alpha1.GitRepository) []string {
	out := make([]string, 0, len(repo.Status.Branches))
	for _, b := range repo.Status.Branches {
		out = append(out, b.Name+": "+b.Error)
	}
	return out
}

// trafficChanged passes a Service's routes moving (a tag's URL), and a
// preview Service's readiness and URL.
var trafficChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, ok1 := e.ObjectOld.(*servingv1.Service)
	now, ok2 := e.ObjectNew.(*servingv1.Service)
	if !ok1 || !ok2 {
		return true
	}
	if !equality.Semantic.DeepEqual(old.Status.Traffic, now.Status.Traffic) {
		return true
	}
	// A preview Service's own readiness and URL are its pull request's.
	return now.Labels[plan.PullRequestLabel] != "" && (old.Status.URL != now.Status.URL ||
		old.Status.ObservedGeneration != now.Status.ObservedGeneration ||
		!equality.Semantic.DeepEqual(old.Status.GetCondition(duckv1.ConditionReady), now.Status.GetCondition(duckv1.ConditionReady)))
}}
