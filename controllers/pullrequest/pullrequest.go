package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/transition"
	"github.com/knitops/knit/gitsync/plan"
)

// Reconcile runs the canary phase, then tells the forge what changed, then
// writes the status. A forge that cannot be reached is a condition and a
// retry with backoff; the preview and the canary go on regardless.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pr := &knitv1alpha1.PullRequest{}
	if err := r.client.Get(ctx, req.NamespacedName, pr); err != nil {
		r.windows.Forget(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pr.Spec.State != knitv1alpha1.PullRequestOpen && pr.Spec.State != "" {
		r.windows.Forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	repo := &knitv1alpha1.GitRepository{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: pr.Namespace, Name: pr.Spec.Repository}, repo); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := pr.Status.DeepCopy()
	commit := r.headCommit(ctx, pr)
	after, err := r.reconcileCanary(ctx, pr, commit)
	if err != nil {
		return ctrl.Result{}, err
	}
	pr.Status.Share = pr.EffectiveShare()
	forgeErr := r.report(ctx, repo, pr, commit)
	if !equality.Semantic.DeepEqual(before, &pr.Status) {
		if err := r.client.Status().Update(ctx, pr); err != nil {
			return ctrl.Result{}, fmt.Errorf("update status of PullRequest %s: %w", pr.Name, err)
		}
		if ev, ok := canaryEvent(before.Canary, pr.Status.Canary); ok {
			transition.Record(r.events, pr, canaryAction, ev)
		}
	}
	if forgeErr != nil {
		return ctrl.Result{}, forgeErr
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// headCommit is the commit the head's preview was built from, or the one
// the forge reported while there is no preview yet.
func (r *Reconciler) headCommit(ctx context.Context, pr *knitv1alpha1.PullRequest) string {
	if pr.Status.RevisionName != "" {
		rev := &servingv1.Revision{}
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: pr.Namespace, Name: pr.Status.RevisionName}, rev); err == nil {
			if sha := rev.Annotations[plan.CommitAnnotation]; sha != "" {
				return sha
			}
		}
	}
	return pr.Spec.HeadCommit
}

// previewReady: the head's preview serves, so a canary step may start.
func previewReady(pr *knitv1alpha1.PullRequest, commit string) bool {
	return commit != "" && pr.Status.RevisionName != "" && pr.Status.GetCondition(duckv1.ConditionReady).IsTrue()
}

// errNoStable: the base Service has no ready revision to compare with.
var errNoStable = errors.New("the base Service has no ready revision")

// stableRevision is the base Service's latest ready revision: what the
// canary is compared with.
func (r *Reconciler) stableRevision(ctx context.Context, pr *knitv1alpha1.PullRequest) (string, error) {
	svc := &servingv1.Service{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: pr.Namespace, Name: pr.Status.BaseService}, svc); err != nil {
		return "", fmt.Errorf("base Service %s: %w", pr.Status.BaseService, err)
	}
	if svc.Status.LatestReadyRevisionName == "" {
		return "", errNoStable
	}
	return svc.Status.LatestReadyRevisionName, nil
}

// requeueFor bounds how long a canary waits for its next look.
func requeueFor(left time.Duration) time.Duration {
	if left <= 0 {
		return time.Second
	}
	return left
}
