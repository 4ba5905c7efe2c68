package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// PullRequest is a rollout: while open, its head commit's Revision gets the
// tag pr-<number> and, when asked, a canary share of the base branch's
// traffic. Forge webhooks and `knit pr` both produce it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pr,categories=all;knit
// +kubebuilder:printcolumn:name="Repository",type=string,JSONPath=`.spec.repository`
// +kubebuilder:printcolumn:name="Number",type=integer,JSONPath=`.spec.number`
// +kubebuilder:printcolumn:name="Head",type=string,JSONPath=`.spec.headBranch`
// +kubebuilder:printcolumn:name="Base",type=string,JSONPath=`.spec.baseBranch`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.spec.state`
// +kubebuilder:printcolumn:name="Canary",type=integer,JSONPath=`.spec.canaryPercent`,priority=1
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.canary.phase`
// +kubebuilder:printcolumn:name="Step",type=integer,JSONPath=`.status.canary.step`
// +kubebuilder:printcolumn:name="Share",type=integer,JSONPath=`.status.share`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.canary.verdict`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type PullRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PullRequestSpec `json:"spec"`
	// +optional
	Status PullRequestStatus `json:"status,omitempty"`
}

// PullRequestState follows the forge's: open, then merged or closed.
// +kubebuilder:validation:Enum=open;merged;closed
type PullRequestState string

// States of a pull request.
const (
	PullRequestOpen   PullRequestState = "open"
	PullRequestMerged PullRequestState = "merged"
	PullRequestClosed PullRequestState = "closed"
)

// PullRequestSpec mirrors the forge's pull request.
type PullRequestSpec struct {
	// Repository is the name of the GitRepository in the same namespace.
	// +kubebuilder:validation:MinLength=1
	Repository string `json:"repository"`
	// Number of the pull request on its forge.
	// +kubebuilder:validation:Minimum=1
	Number int64 `json:"number"`
	// HeadBranch holds the proposed change.
	// +kubebuilder:validation:MinLength=1
	HeadBranch string `json:"headBranch"`
	// BaseBranch is where the change would merge.
	// +kubebuilder:validation:MinLength=1
	BaseBranch string `json:"baseBranch"`
	// HeadCommit is the full SHA of the head, when the forge reported it.
	// +optional
	HeadCommit string `json:"headCommit,omitempty"`
	// State of the pull request.
	// +kubebuilder:default=open
	// +optional
	State PullRequestState `json:"state,omitempty"`
	// CanaryPercent of the base branch's traffic the head receives while open.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CanaryPercent int64 `json:"canaryPercent,omitempty"`
	// Title of the pull request on its forge.
	// +optional
	Title string `json:"title,omitempty"`
	// Description (body) of the pull request: a line
	// "knit: canary 10,25,50 every 2m" in it asks for a stepped canary.
	// +optional
	Description string `json:"description,omitempty"`
	// Labels on the pull request: "knit/canary" asks for a stepped canary.
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// CanaryPhase is where a stepped canary stands.
// +kubebuilder:validation:Enum=Progressing;Promoted;RolledBack;Invalid
type CanaryPhase string

// Phases of a stepped canary.
const (
	// CanaryProgressing: a step is running; its analysis decides the next.
	CanaryProgressing CanaryPhase = "Progressing"
	// CanaryPromoted: every step passed; the head keeps the last share
	// until the pull request is merged or closed.
	CanaryPromoted CanaryPhase = "Promoted"
	// CanaryRolledBack: an analysis failed; the head gets no traffic until
	// a new push restarts the canary.
	CanaryRolledBack CanaryPhase = "RolledBack"
	// CanaryInvalid: the plan the user wrote cannot be read; Message says why.
	CanaryInvalid CanaryPhase = "Invalid"
)

// CanaryStatus is the progress of a stepped canary on the head commit.
type CanaryStatus struct {
	// Source of the plan: description, label or annotation.
	Source string `json:"source,omitempty"`
	// Steps are the shares of the base's traffic, in percent.
	Steps []int64 `json:"steps,omitempty"`
	// Interval each step runs before its analysis.
	Interval metav1.Duration `json:"interval,omitempty"`
	// Commit the canary runs for; a push to the head restarts it.
	Commit string `json:"commit,omitempty"`
	// Phase of the canary.
	Phase CanaryPhase `json:"phase,omitempty"`
	// Step is the 1-based step running (or the last one reached).
	Step int32 `json:"step,omitempty"`
	// Percent of the base's traffic the head receives now.
	Percent int64 `json:"percent"`
	// StepStarted is when the running step's window began.
	// +optional
	StepStarted *metav1.Time `json:"stepStarted,omitempty"`
	// LastAnalysis is when the last verdict was reached; an inconclusive
	// one is looked at again an interval later.
	// +optional
	LastAnalysis *metav1.Time `json:"lastAnalysis,omitempty"`
	// Verdict of the last analysis: Pass, Fail or Inconclusive.
	// +optional
	Verdict string `json:"verdict,omitempty"`
	// Message explains the verdict with the numbers that decided it.
	// +optional
	Message string `json:"message,omitempty"`
}

// ForgeReport is what knit last told the forge about the head, so a
// resync does not post it again.
type ForgeReport struct {
	// Commit the statuses were set on.
	Commit string `json:"commit,omitempty"`
	// Preview is the knit/preview state last set: pending, success or failure.
	Preview string `json:"preview,omitempty"`
	// Canary is the knit/canary state and step last set.
	Canary string `json:"canary,omitempty"`
	// Comment is a digest of the last comment body written.
	Comment string `json:"comment,omitempty"`
	// Merged is set once knit asked the forge to merge (automerge).
	Merged bool `json:"merged,omitempty"`
}

// PullRequestStatus reports where the head revision is reachable.
type PullRequestStatus struct {
	duckv1.Status `json:",inline"`

	// Tag given to the head revision, pr-<number>.
	// +optional
	Tag string `json:"tag,omitempty"`
	// URL of the tagged head revision.
	// +optional
	URL string `json:"url,omitempty"`
	// RevisionName serving the head commit.
	// +optional
	RevisionName string `json:"revisionName,omitempty"`
	// BaseService is the Service whose traffic the canary shares.
	// +optional
	BaseService string `json:"baseService,omitempty"`
	// CanaryAnnotation is the knit.dev/canary annotation of the head's
	// Service, as rendered from the head commit.
	// +optional
	CanaryAnnotation string `json:"canaryAnnotation,omitempty"`
	// Share of the base's traffic the head receives now: the stepped
	// canary's, else spec.canaryPercent.
	// +optional
	Share int64 `json:"share,omitempty"`
	// Canary is the stepped canary's progress, when one is asked for.
	// +optional
	Canary *CanaryStatus `json:"canary,omitempty"`
	// Reported is what knit last told the forge.
	// +optional
	Reported *ForgeReport `json:"reported,omitempty"`
}

// PullRequestConditions is the PullRequest's checklist: Ready (the preview
// is deployed and routed) alone; ForgeReported and Canary are
// informational and never move Ready.
var PullRequestConditions = duckv1.NewLivingConditionSet()

// Informational conditions of a PullRequest.
const (
	// PullRequestConditionForgeReported is False while knit cannot set
	// its statuses or comment on the forge (no token, rate limits, errors).
	PullRequestConditionForgeReported duckv1.ConditionType = "ForgeReported"
	// PullRequestConditionCanary follows the stepped canary: True once
	// promoted, False when rolled back or its plan is invalid.
	PullRequestConditionCanary duckv1.ConditionType = "Canary"
)

// EffectiveShare is the share of the base's traffic the head should
// receive: a stepped canary's current percent, else the fixed
// spec.canaryPercent.
func (pr *PullRequest) EffectiveShare() int64 {
	if c := pr.Status.Canary; c != nil && c.Phase != CanaryInvalid && c.Commit != "" {
		return c.Percent
	}
	return pr.Spec.CanaryPercent
}

// +kubebuilder:object:root=true

// PullRequestList is a list of PullRequests.
type PullRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PullRequest `json:"items"`
}
