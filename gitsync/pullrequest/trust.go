package pullrequest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/forge"
)

// A pull request from a fork carries code, and a description, written by
// someone who may have no right to deploy. knit previews it, gives it
// canary traffic or merges it only once a maintainer said so, for the
// exact commit they looked at; and it never reads automerge from a place
// the author can write.
const (
	// DefaultApprovalLabel is the label a maintainer puts on a fork's pull
	// request to let knit preview, canary and (with AutoMergeLabel) merge
	// its head. Forges let only users with triage or write access (GitHub,
	// Gitea) or at least the Reporter role (GitLab) set labels, so the
	// author of a fork cannot set it.
	DefaultApprovalLabel = "knit/approved"
	// ApprovalLabelAnnotation on a GitRepository names another approval
	// label for its pull requests.
	ApprovalLabelAnnotation = "knit.dev/approval-label"
	// AutoMergeLabel asks knit to merge a pull request whose canary passed
	// every step. It is the only way to ask: "automerge" in the
	// description or the head's knit.dev/canary annotation is text the
	// author writes, and is ignored.
	AutoMergeLabel = "knit/automerge"

	// ForkAnnotation on a PullRequest says its head lives in another
	// repository. Once set it stays: a later event that fails to say so
	// does not make the pull request trusted.
	ForkAnnotation = "knit.dev/fork"
	// ApprovedCommitAnnotation is the head commit the approval label was
	// added for. A push after the approval moves the head away from it, so
	// the new commits are not approved until a maintainer removes and adds
	// the label again: an approval covers the code that was reviewed, not
	// whatever the author pushes next.
	ApprovedCommitAnnotation = "knit.dev/approved-commit"
	// ForgeUpdatedAnnotation is the forge's updated_at of the last event
	// recorded; an older event is a replay or a late redelivery and is
	// refused (forge.ErrStale). It survives a restart, unlike the
	// receiver's in-memory dedupe.
	ForgeUpdatedAnnotation = "knit.dev/forge-updated-at"
)

// ApprovalLabel is the approval label of repo's pull requests.
func ApprovalLabel(repo *knitv1alpha1.GitRepository) string {
	if l := strings.TrimSpace(repo.Annotations[ApprovalLabelAnnotation]); l != "" {
		return l
	}
	return DefaultApprovalLabel
}

// IsFork says whether pr's head lives in another repository.
func IsFork(pr *knitv1alpha1.PullRequest) bool {
	return pr.Annotations[ForkAnnotation] == "true"
}

// Approved says whether commit of pr may be deployed: the head of a
// pull request from the repository itself always may (its author can
// push to the repository anyway), a fork's only when a maintainer's
// approval label was added while commit was the head.
func Approved(pr *knitv1alpha1.PullRequest, commit string) bool {
	if !IsFork(pr) {
		return true
	}
	return commit != "" && pr.Annotations[ApprovedCommitAnnotation] == commit
}

// AutoMerge says whether pr asks to be merged once its canary passed: the
// AutoMergeLabel, which only maintainers can set.
func AutoMerge(pr *knitv1alpha1.PullRequest) bool {
	return slices.Contains(pr.Spec.Labels, AutoMergeLabel)
}

// PullRef is the ref under which a forge serves pull request number's
// head in the base repository: a fork's branch of the same name in the
// base repository is someone else's branch, or nobody's. Generic senders
// must serve a fork's head under refs/pull/<number>/head too.
func PullRef(f forge.Forge, number int64) string {
	n := strconv.FormatInt(number, 10)
	if f == forge.ForgeGitLab {
		return "refs/merge-requests/" + n + "/head"
	}
	return "refs/pull/" + n + "/head"
}

// Provenance is what a forge's event says about who may deploy a pull
// request's head.
type Provenance struct {
	// Fork: the head lives in another repository.
	Fork bool
	// UpdatedAt is the forge's last change of the pull request; zero
	// when the event carries none.
	UpdatedAt time.Time
	// ApprovalLabel is the repository's approval label.
	ApprovalLabel string
}

// applyProvenance records p on pr, which had oldLabels before this event
// (nil for a new pull request) and whose head is now head. It refuses an
// event older than the last one recorded.
func applyProvenance(pr *knitv1alpha1.PullRequest, p *Provenance, oldLabels, newLabels []string, head string) error {
	if pr.Annotations == nil {
		pr.Annotations = map[string]string{}
	}
	if !p.UpdatedAt.IsZero() {
		if last, err := time.Parse(time.RFC3339, pr.Annotations[ForgeUpdatedAnnotation]); err == nil && p.UpdatedAt.Before(last) {
			return fmt.Errorf("pull request #%d: event of %s, knit recorded one of %s: %w",
				pr.Spec.Number, p.UpdatedAt.Format(time.RFC3339), last.Format(time.RFC3339), forge.ErrStale)
		}
		pr.Annotations[ForgeUpdatedAnnotation] = p.UpdatedAt.UTC().Format(time.RFC3339)
	}
	if p.Fork {
		pr.Annotations[ForkAnnotation] = "true"
	}
	label := p.ApprovalLabel
	switch has := slices.Contains(newLabels, label); {
	case !has:
		delete(pr.Annotations, ApprovedCommitAnnotation)
	case !slices.Contains(oldLabels, label) && head != "":
		pr.Annotations[ApprovedCommitAnnotation] = head
	}
	return nil
}
