package pullrequest

import (
	"context"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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

// Reconciler reports pull requests to their forge and runs their canaries.
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
// watches the preview Revisions (labelled with their pull request), so a
// preview turning ready or failing reaches the forge without a poll.
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
	return ctrl.NewControllerManagedBy(mgr).
		Named("pullrequest").
		For(&knitv1alpha1.PullRequest{}).
		Watches(&servingv1.Revision{}, handler.EnqueueRequestsFromMapFunc(pullRequestOfRevision)).
		Complete(conflict.Requeue(r))
}

// pullRequestOfRevision maps a preview Revision to its PullRequest.
func pullRequestOfRevision(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	number, err := strconv.ParseInt(l[plan.PullRequestLabel], 10, 64)
	if err != nil || l[plan.RepositoryLabel] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: prmodel.Name(l[plan.RepositoryLabel], number)}}}
}
