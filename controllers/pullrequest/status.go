package pullrequest

import (
	"fmt"
	"slices"

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
// it), where it serves (that preview's own URL, else its tag's on base,
// the base Service, nil when there is none) and Ready.
func markOpen(pr *knitv1alpha1.PullRequest, repo *knitv1alpha1.GitRepository, base *servingv1.Service) {
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
	s.URL = out.URL
	if s.URL == "" {
		s.URL = tagURL(base, s.Tag)
	}
	switch {
	case out.Phase == knitv1alpha1.PreviewFailed:
		s.MarkPreviewFailed(out.Message)
	case out.Phase == knitv1alpha1.PreviewReady && s.URL != "":
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
