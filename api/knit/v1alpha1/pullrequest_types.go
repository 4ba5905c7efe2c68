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
// +kubebuilder:printcolumn:name="Canary",type=integer,JSONPath=`.spec.canaryPercent`
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
}

// PullRequestConditions is the PullRequest's checklist: Ready alone.
var PullRequestConditions = duckv1.NewLivingConditionSet()

// +kubebuilder:object:root=true

// PullRequestList is a list of PullRequests.
type PullRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PullRequest `json:"items"`
}
