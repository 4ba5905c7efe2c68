package gitrepository

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
)

// markRevisions is the repository's status roll-up: RevisionsReady from
// the Services the repository applied, False naming the commit when a
// Service's latest Revision failed, Unknown while one deploys. It reads
// the cache only, so it runs on every pass.
func (r *Reconciler) markRevisions(ctx context.Context, repo *knitv1alpha1.GitRepository) error {
	var failed, deploying []string
	for _, ref := range repo.Status.Inventory {
		if !isService(ref) {
			continue
		}
		svc := r.liveService(ctx, ref.Namespace, ref.Name)
		if svc == nil || svc.Status.LatestCreatedRevisionName == "" {
			deploying = append(deploying, ref.Name)
			continue
		}
		rev := &servingv1.Revision{}
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: svc.Status.LatestCreatedRevisionName}, rev); err != nil {
			deploying = append(deploying, ref.Name)
			continue
		}
		switch ready := rev.Status.GetCondition(duckv1.ConditionReady); {
		case ready.IsFalse():
			failed = append(failed, revisionFailure(svc, rev, ready))
		case !ready.IsTrue():
			deploying = append(deploying, ref.Name)
		}
	}
	switch {
	case len(failed) > 0:
		repo.Status.MarkRevisionsFailed(strings.Join(failed, "; "))
	case len(deploying) > 0:
		repo.Status.MarkRevisionsDeploying("waiting for " + strings.Join(deploying, ", "))
	default:
		repo.Status.MarkRevisionsReady()
	}
	return nil
}

func revisionFailure(svc *servingv1.Service, rev *servingv1.Revision, ready *duckv1.Condition) string {
	msg := fmt.Sprintf("Service %s: revision %s", svc.Name, rev.Name)
	if sha := rev.Annotations[plan.CommitAnnotation]; len(sha) >= 7 {
		msg += fmt.Sprintf(" of commit %s (%s)", sha[:7], rev.Annotations[plan.MessageAnnotation])
	}
	msg += fmt.Sprintf(" failed: %s: %s", ready.Reason, ready.Message)
	if prev := svc.Status.LatestReadyRevisionName; prev != "" && prev != rev.Name {
		msg += fmt.Sprintf("; %s keeps serving", prev)
	}
	return msg
}

// updatePullRequests is the pull requests' status roll-up: what the last
// apply did for each (outcomes, by number) and the URL its tag got.
func (r *Reconciler) updatePullRequests(ctx context.Context, prs []knitv1alpha1.PullRequest, outcomes map[int64]*previewOutcome) error {
	for i := range prs {
		pr := &prs[i]
		before := pr.Status.DeepCopy()
		if isOpen(pr) {
			r.markOpen(ctx, pr, outcomes[pr.Spec.Number])
		} else {
			markDone(pr)
		}
		if equality.Semantic.DeepEqual(before, &pr.Status) {
			continue
		}
		pr.Status.ObservedGeneration = pr.Generation
		if err := r.client.Status().Update(ctx, pr); err != nil {
			return fmt.Errorf("update status of PullRequest %s: %w", pr.Name, err)
		}
	}
	return nil
}

func (r *Reconciler) markOpen(ctx context.Context, pr *knitv1alpha1.PullRequest, out *previewOutcome) {
	pr.Status.Tag = plan.Tag(pr.Spec.Number)
	if out == nil {
		pr.Status.MarkBaseNotTracked(pr.Spec.BaseBranch)
		return
	}
	if len(out.revisions) > 0 {
		pr.Status.RevisionName = out.revisions[0]
	}
	pr.Status.BaseService, pr.Status.CanaryAnnotation = out.baseService, out.canaryAnnotation
	pr.Status.URL = r.tagURL(ctx, pr)
	switch {
	case out.err != "":
		pr.Status.MarkPreviewFailed(out.err)
	case out.ready && pr.Status.URL != "":
		pr.Status.MarkPreviewReady()
	default:
		pr.Status.MarkPreviewDeploying()
	}
}

func markDone(pr *knitv1alpha1.PullRequest) {
	pr.Status.Tag, pr.Status.URL, pr.Status.RevisionName = "", "", ""
	pr.Status.Share = 0
	pr.Status.MarkDone(pr.Spec.State == knitv1alpha1.PullRequestMerged)
}

// tagURL is the URL the base Service's route gives the pull request's tag.
func (r *Reconciler) tagURL(ctx context.Context, pr *knitv1alpha1.PullRequest) string {
	svcs := &servingv1.ServiceList{}
	if err := r.client.List(ctx, svcs, client.InNamespace(pr.Namespace),
		client.MatchingLabels{plan.RepositoryLabel: pr.Spec.Repository, plan.BranchLabel: pr.Spec.BaseBranch}); err != nil {
		return ""
	}
	tag := plan.Tag(pr.Spec.Number)
	for _, svc := range svcs.Items {
		for _, t := range svc.Status.Traffic {
			if t.Tag == tag && t.URL != "" {
				return t.URL
			}
		}
	}
	return ""
}
