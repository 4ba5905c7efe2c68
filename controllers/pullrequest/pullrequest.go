package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/transition"
)

// fieldOwner names this reconciler's status writes in managedFields: the
// PullRequest's status has no other writer.
const fieldOwner = client.FieldOwner("knit-pullrequest")

// Reconcile writes what the pull request's preview is (from its
// repository's status.previews and the base Service's routes), runs the
// canary phase, then tells the forge what changed, then writes the
// status. A forge that cannot be reached is a condition and a retry with
// backoff; the preview and the canary go on regardless.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pr := &knitv1alpha1.PullRequest{}
	if err := r.client.Get(ctx, req.NamespacedName, pr); err != nil {
		r.windows.Forget(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := pr.Status.DeepCopy()
	if !isOpen(pr) {
		r.windows.Forget(req.NamespacedName)
		markDone(pr)
		return ctrl.Result{}, r.writeStatus(ctx, pr, before)
	}
	repo := &knitv1alpha1.GitRepository{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: pr.Namespace, Name: pr.Spec.Repository}, repo); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base, err := r.baseService(ctx, pr, repo)
	if err != nil {
		return ctrl.Result{}, err
	}
	services, err := r.previewServices(ctx, pr, repo)
	if err != nil {
		return ctrl.Result{}, err
	}
	markOpen(pr, repo, base, services)
	commit := headOf(pr, repo)
	after, err := r.reconcileCanary(ctx, pr, commit, addsOnly(repo.Status.Preview(pr.Spec.Number)))
	if err != nil {
		return ctrl.Result{}, err
	}
	pr.Status.Share = pr.EffectiveShare()
	forgeErr := r.report(ctx, repo, pr, commit)
	if err := r.writeStatus(ctx, pr, before); err != nil {
		return ctrl.Result{}, err
	}
	if forgeErr != nil {
		return ctrl.Result{}, forgeErr
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// writeStatus writes pr's status when it moved from before, and records
// the canary's move as an Event once written.
func (r *Reconciler) writeStatus(ctx context.Context, pr *knitv1alpha1.PullRequest, before *knitv1alpha1.PullRequestStatus) error {
	pr.Status.ObservedGeneration = pr.Generation
	if equality.Semantic.DeepEqual(before, &pr.Status) {
		return nil
	}
	if err := r.client.Status().Update(ctx, pr, fieldOwner); err != nil {
		return fmt.Errorf("update status of PullRequest %s: %w", pr.Name, err)
	}
	if ev, ok := canaryEvent(before.Canary, pr.Status.Canary); ok {
		transition.Record(r.events, pr, canaryAction, ev)
	}
	return nil
}

// baseService is the Service whose routes carry pr's tag, as its
// repository's preview of it names it; nil when there is none (yet).
func (r *Reconciler) baseService(ctx context.Context, pr *knitv1alpha1.PullRequest, repo *knitv1alpha1.GitRepository) (*servingv1.Service, error) {
	out := repo.Status.Preview(pr.Spec.Number)
	if out == nil || out.BaseService == "" {
		return nil, nil
	}
	svc := &servingv1.Service{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: pr.Namespace, Name: out.BaseService}, svc)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("base Service %s: %w", out.BaseService, err)
	}
	return svc, nil
}

// previewServices are the preview Services pr's repository made of the
// Services its head adds, those that exist.
func (r *Reconciler) previewServices(ctx context.Context, pr *knitv1alpha1.PullRequest, repo *knitv1alpha1.GitRepository) ([]*servingv1.Service, error) {
	out := repo.Status.Preview(pr.Spec.Number)
	if out == nil {
		return nil, nil
	}
	var svcs []*servingv1.Service
	for _, name := range out.Services {
		svc := &servingv1.Service{}
		err := r.client.Get(ctx, types.NamespacedName{Namespace: pr.Namespace, Name: name}, svc)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("preview Service %s: %w", name, err)
		}
		svcs = append(svcs, svc)
	}
	return svcs, nil
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
