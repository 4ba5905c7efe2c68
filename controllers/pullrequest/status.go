package pullrequest

import (
	"fmt"
	"slices"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
)

// This reconciler is the only writer of a PullRequest's status. What the
// preview is comes from its GitRepository's status.previews, which the
// GitRepository reconciler alone writes and a restart keeps; where it
// serves comes from the base Service's routes. Both are read here, so
// neither controller's write can race the other's.

// markOpen sets what an open pull request's status says of its preview:
// its tag, what its repository's last pass recorded (repo's preview of
// it), where it serves (its tag's URL on base, the base Service, nil when
// there is none; for a head that only adds Services, its first preview
// Service's) and Ready, which waits for the preview Services too
// (services, those of them that exist).
func markOpen(pr *knitv1alpha1.PullRequest, repo *knitv1alpha1.GitRepository, base *servingv1.Service, services []*servingv1.Service) {
	s := &pr.Status
	s.Tag = plan.Tag(pr.Spec.Number)
	out := repo.Status.Preview(pr.Spec.Number)
	if out == nil {
		s.RevisionName, s.BaseService, s.CanaryAnnotation, s.URL = "", "", "", ""
		markNoPreview(pr, repo)
		return
	}
	s.RevisionName = ""
	if len(out.RevisionNames) > 0 {
		s.RevisionName = out.RevisionNames[0]
	}
	s.BaseService, s.CanaryAnnotation = out.BaseService, out.CanaryAnnotation
	s.URL = tagURL(base, s.Tag)
	ready, url, failed := previewServices(services, len(out.Services))
	if s.URL == "" && len(out.RevisionNames) == 0 {
		s.URL = url
	}
	switch {
	case out.Phase == knitv1alpha1.PreviewFailed:
		s.MarkPreviewFailed(out.Message)
	case failed != "":
		s.MarkPreviewFailed(failed)
	case out.Phase == knitv1alpha1.PreviewReady && ready && s.URL != "":
		s.MarkPreviewReady()
	default:
		s.MarkPreviewDeploying()
	}
}

// markNoPreview says why the repository recorded no preview of pr: its
// base branch is not tracked, or the base branch's head did not sync
// (its previews wait for it), or no pass has looked at the pull request
// yet.
func markNoPreview(pr *knitv1alpha1.PullRequest, repo *knitv1alpha1.GitRepository) {
	base := pr.Spec.BaseBranch
	switch b := repo.Status.Branch(base); {
	case !slices.Contains(repo.Spec.TrackedBranches(), base):
		pr.Status.MarkBaseNotTracked(base)
	case b != nil && b.Error != "":
		pr.Status.MarkPreviewFailed(fmt.Sprintf("base branch %q did not sync: %s", base, b.Error))
	default:
		pr.Status.MarkPreviewDeploying()
	}
}

// markDone clears a merged or closed pull request's preview: the
// GitRepository reconciler removed its Revisions and traffic.
func markDone(pr *knitv1alpha1.PullRequest) {
	pr.Status.Tag, pr.Status.URL, pr.Status.RevisionName = "", "", ""
	pr.Status.Share = 0
	pr.Status.MarkDone(pr.Spec.State == knitv1alpha1.PullRequestMerged)
}

// previewServices is where a pull request's preview Services stand:
// ready when all of the want there are serve their current spec, the
// first one's URL, and why the first failed one failed.
func previewServices(services []*servingv1.Service, want int) (ready bool, url, failed string) {
	ready = len(services) == want
	for _, svc := range services {
		if url == "" {
			url = svc.Status.URL
		}
		switch c := svc.Status.GetCondition(duckv1.ConditionReady); {
		case c.IsFalse():
			if failed == "" {
				failed = fmt.Sprintf("preview Service %s failed: %s: %s", svc.Name, c.Reason, c.Message)
			}
			ready = false
		case !c.IsTrue() || svc.Status.ObservedGeneration != svc.Generation:
			ready = false
		}
	}
	return ready, url, failed
}

// addsOnly: the preview is Services of their own, no tagged Revision of
// a base Service.
func addsOnly(out *knitv1alpha1.PreviewStatus) bool {
	return out != nil && len(out.RevisionNames) == 0 && len(out.Services) > 0
}

// tagURL is the URL base's routes give tag, "" while they give none.
func tagURL(base *servingv1.Service, tag string) string {
	if base == nil {
		return ""
	}
	for _, t := range base.Status.Traffic {
		if t.Tag == tag && t.URL != "" {
			return t.URL
		}
	}
	return ""
}

// headOf is the commit pr's preview was made from, or the one the forge
// reported while its repository recorded none.
func headOf(pr *knitv1alpha1.PullRequest, repo *knitv1alpha1.GitRepository) string {
	if out := repo.Status.Preview(pr.Spec.Number); out != nil && out.Commit != "" {
		return out.Commit
	}
	return pr.Spec.HeadCommit
}

func isOpen(pr *knitv1alpha1.PullRequest) bool {
	return pr.Spec.State == knitv1alpha1.PullRequestOpen || pr.Spec.State == ""
}
