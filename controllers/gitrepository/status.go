package gitrepository

import (
	"context"
	"fmt"
	"strings"

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
		if !isService(ref) || ref.PullRequest != 0 { // a preview's are its pull request's
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
