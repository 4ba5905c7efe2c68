package v1alpha1

import (
	"fmt"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// Reasons of the PullRequest's conditions (ReasonDeploying is shared with
// the GitRepository).
const (
	// ReasonBaseNotTracked: the pull request's base branch is not one the
	// repository tracks, so it gets no preview.
	ReasonBaseNotTracked = "BaseNotTracked"
	// ReasonPreviewFailed: the head's preview could not be deployed.
	ReasonPreviewFailed = "PreviewFailed"
	// ReasonClosed and ReasonMerged: the pull request is done and its
	// preview removed.
	ReasonClosed = "Closed"
	ReasonMerged = "Merged"
	// ReasonInvalidPlan: the canary plan cannot be read.
	ReasonInvalidPlan = "InvalidPlan"
	// ReasonProgressing, ReasonPromoted and ReasonRolledBack follow the
	// stepped canary's phase.
	ReasonProgressing = "Progressing"
	ReasonPromoted    = "Promoted"
	ReasonRolledBack  = "RolledBack"
	// ReasonNoForgeClient: the repository has no forge client (no token).
	ReasonNoForgeClient = "NoForgeClient"
	// ReasonForgeError: the forge refused or did not answer.
	ReasonForgeError = "ForgeError"
)

// MarkBaseNotTracked: base is not a tracked branch of the repository.
func (ps *PullRequestStatus) MarkBaseNotTracked(base string) {
	PullRequestConditions.Manage(&ps.Status).MarkFalse(duckv1.ConditionReady, ReasonBaseNotTracked,
		fmt.Sprintf("base branch %q is not one of the repository's tracked branches", base))
}

// MarkPreviewFailed: the head's preview could not be deployed; message
// says why.
func (ps *PullRequestStatus) MarkPreviewFailed(message string) {
	PullRequestConditions.Manage(&ps.Status).MarkFalse(duckv1.ConditionReady, ReasonPreviewFailed, message)
}

// MarkPreviewReady: the head's Revision is ready and its tag routed.
func (ps *PullRequestStatus) MarkPreviewReady() {
	PullRequestConditions.Manage(&ps.Status).MarkTrue(duckv1.ConditionReady)
}

// MarkPreviewDeploying: the head's Revision is not ready or routed yet.
func (ps *PullRequestStatus) MarkPreviewDeploying() {
	PullRequestConditions.Manage(&ps.Status).MarkUnknown(duckv1.ConditionReady, ReasonDeploying,
		"waiting for the head's Revision to become ready and routed")
}

// MarkDone: the pull request was merged or closed and its preview removed.
func (ps *PullRequestStatus) MarkDone(merged bool) {
	reason := ReasonClosed
	if merged {
		reason = ReasonMerged
	}
	PullRequestConditions.Manage(&ps.Status).MarkTrueWithReason(duckv1.ConditionReady, reason, "the preview and its traffic are removed")
}

// MarkCanaryInvalid: the canary plan cannot be read; message says why.
func (ps *PullRequestStatus) MarkCanaryInvalid(message string) {
	PullRequestConditions.Manage(&ps.Status).MarkFalse(PullRequestConditionCanary, ReasonInvalidPlan, message)
}

// MarkCanaryProgressing: the canary runs a step; message says which.
func (ps *PullRequestStatus) MarkCanaryProgressing(message string) {
	PullRequestConditions.Manage(&ps.Status).MarkUnknown(PullRequestConditionCanary, ReasonProgressing, message)
}

// MarkCanaryPromoted: every step passed.
func (ps *PullRequestStatus) MarkCanaryPromoted(message string) {
	PullRequestConditions.Manage(&ps.Status).MarkTrueWithReason(PullRequestConditionCanary, ReasonPromoted, message)
}

// MarkCanaryRolledBack: a step failed its analysis; message says how.
func (ps *PullRequestStatus) MarkCanaryRolledBack(message string) {
	PullRequestConditions.Manage(&ps.Status).MarkFalse(PullRequestConditionCanary, ReasonRolledBack, message)
}

// MarkForgeReported: the forge was told everything.
func (ps *PullRequestStatus) MarkForgeReported() {
	PullRequestConditions.Manage(&ps.Status).MarkTrue(PullRequestConditionForgeReported)
}

// MarkForgeNotReported: the forge could not be told (ReasonNoForgeClient,
// ReasonForgeError); message is the error.
func (ps *PullRequestStatus) MarkForgeNotReported(reason, message string) {
	PullRequestConditions.Manage(&ps.Status).MarkFalse(PullRequestConditionForgeReported, reason, message)
}
