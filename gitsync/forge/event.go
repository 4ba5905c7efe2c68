package forge

import "time"

// Kind is what happened in the repository.
type Kind string

// Kinds of events a Receiver delivers.
const (
	// KindPush is a branch moving (or being created or deleted).
	KindPush Kind = "push"
	// KindPullRequest is a pull (merge) request opening, moving, or closing.
	KindPullRequest Kind = "pull_request"
)

// Action is what happened to a pull request, in GitHub's words whatever
// the forge called it.
type Action string

// Pull-request actions knit acts on; forges' other actions are ignored.
const (
	// ActionOpened: a new pull request; its head gets a tag URL.
	ActionOpened Action = "opened"
	// ActionSynchronize: new commits on the head branch.
	ActionSynchronize Action = "synchronize"
	// ActionReopened: a closed pull request is open again.
	ActionReopened Action = "reopened"
	// ActionClosed: merged (Event.Merged) or abandoned.
	ActionClosed Action = "closed"
	// ActionEdited: the title, description, labels or base branch of an
	// open pull request changed; the head did not move. knit reads a canary
	// request from the labels and the description, so a user can ask for
	// (or drop) one without pushing. Edits of closed pull requests are
	// ignored: there is nothing left to roll out.
	ActionEdited Action = "edited"
)

// Forge names the sender of a webhook and so how it is verified and parsed.
// The values match the GitRepository's spec.provider.
type Forge string

// Forges a Receiver understands.
const (
	ForgeGitHub  Forge = "github"
	ForgeGitLab  Forge = "gitlab"
	ForgeGitea   Forge = "gitea"
	ForgeGeneric Forge = "generic"
)

// Event is one push or pull-request webhook, whichever forge sent it.
// Fields that do not apply to the Kind are empty.
type Event struct {
	// Kind says which of the field groups below is filled.
	Kind Kind `json:"kind"`
	// Forge that sent the webhook.
	Forge Forge `json:"forge"`
	// Repo is the repository as knit knows it: the <repo> of the hook's URL.
	Repo string `json:"repo"`
	// ForgeRepo is the repository's full name on the forge (owner/name),
	// for logs; empty for generic webhooks.
	ForgeRepo string `json:"forgeRepo,omitempty"`
	// Delivery is the forge's id of this delivery; redeliveries repeat it.
	Delivery string `json:"delivery,omitempty"`

	// Ref is the full ref pushed (refs/heads/main). Push only.
	Ref string `json:"ref,omitempty"`
	// Branch is Ref without refs/heads/. Push only.
	Branch string `json:"branch,omitempty"`
	// Before is the branch's previous head; all zeros for a new branch. Push only.
	Before string `json:"before,omitempty"`
	// After is the branch's new head; all zeros when Deleted. Push only.
	After string `json:"after,omitempty"`
	// Deleted is true when the push deleted the branch. Push only.
	Deleted bool `json:"deleted,omitempty"`
	// Message of the head commit. Push only.
	Message string `json:"message,omitempty"`

	// Author wrote the head commit (push) or the pull request: their login
	// when the payload gives it (GitHub, Gitea), else their display name
	// (GitLab commits), else the pusher. GitLab merge requests carry only
	// the user who acted, so that is who Author names there.
	Author string `json:"author,omitempty"`

	// Number of the pull request on its forge (GitLab's iid). Pull request only.
	Number int64 `json:"number,omitempty"`
	// Action that triggered the webhook. Pull request only.
	Action Action `json:"action,omitempty"`
	// Merged is true when Action is closed because the request was merged.
	Merged bool `json:"merged,omitempty"`
	// HeadBranch holds the proposed change. Pull request only.
	HeadBranch string `json:"headBranch,omitempty"`
	// HeadSHA is the head branch's commit. Pull request only.
	HeadSHA string `json:"headSHA,omitempty"`
	// Fork is true when the head branch lives in another repository (a
	// fork): its commits are not fetched with Repo, and its code comes
	// from someone who may not be trusted to deploy. Parsers fail closed:
	// a payload that does not say where the head lives is a fork.
	Fork bool `json:"fork,omitempty"`
	// HeadRepo is the full name of the repository holding the head, when
	// the payload names it (GitHub, Gitea). Pull request only.
	HeadRepo string `json:"headRepo,omitempty"`
	// UpdatedAt is when the forge last changed the pull request, from the
	// signed payload (zero when it carries none). A receiver that has
	// recorded a later one knows this event is a replay or a late
	// redelivery. Pull request only.
	UpdatedAt time.Time `json:"updatedAt,omitempty"`
	// BaseBranch is where the change would merge. Pull request only.
	BaseBranch string `json:"baseBranch,omitempty"`
	// Title of the pull request. Pull request only.
	Title string `json:"title,omitempty"`
	// Body is the pull request's description (GitLab's "description"),
	// where a user may write a canary request. Pull request only.
	Body string `json:"body,omitempty"`
	// Labels are the names of the pull request's labels after the event,
	// in the forge's order; nil when it has none. Pull request only.
	Labels []string `json:"labels,omitempty"`
}

// zeroSHA is how forges spell "no commit" in before/after of a push.
const zeroSHA = "0000000000000000000000000000000000000000"

// branchPrefix marks a ref as a branch.
const branchPrefix = "refs/heads/"
