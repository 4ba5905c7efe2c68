package forge

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// GitHub's webhook headers.
const (
	headerGitHubEvent     = "X-GitHub-Event"
	headerGitHubDelivery  = "X-GitHub-Delivery"
	headerGitHubSignature = "X-Hub-Signature-256"
)

// githubUser is a GitHub or Gitea account as payloads show it. Gitea sends
// both login and its older alias username.
type githubUser struct {
	Login    string `json:"login"`
	Username string `json:"username"`
}

// githubRepo is a repository as GitHub and Gitea payloads show it.
type githubRepo struct {
	ID       int64  `json:"id"`
	FullName string `json:"full_name"`
}

// githubCommit is a commit in a GitHub or Gitea push payload.
type githubCommit struct {
	ID      string `json:"id"`
	Message string `json:"message"`
	Author  struct {
		Name     string `json:"name"`
		Email    string `json:"email"`
		Username string `json:"username"`
	} `json:"author"`
}

// githubPush is the part of a GitHub (or Gitea) push payload knit reads.
type githubPush struct {
	Ref        string         `json:"ref"`
	Before     string         `json:"before"`
	After      string         `json:"after"`
	Deleted    bool           `json:"deleted"`
	HeadCommit *githubCommit  `json:"head_commit"`
	Commits    []githubCommit `json:"commits"`
	Pusher     struct {
		Name  string `json:"name"`
		Login string `json:"login"`
	} `json:"pusher"`
	Sender     githubUser `json:"sender"`
	Repository githubRepo `json:"repository"`
}

// githubBranch is the head or base of a GitHub (or Gitea) pull request.
type githubBranch struct {
	Ref    string      `json:"ref"`
	SHA    string      `json:"sha"`
	RepoID int64       `json:"repo_id"` // Gitea only
	Repo   *githubRepo `json:"repo"`
}

// githubLabel is a label as GitHub and Gitea payloads show it.
type githubLabel struct {
	Name string `json:"name"`
}

// githubPullRequest is the part of a GitHub (or Gitea) pull_request payload knit reads.
type githubPullRequest struct {
	Action      string `json:"action"`
	Number      int64  `json:"number"`
	PullRequest *struct {
		Number int64  `json:"number"`
		Title  string `json:"title"`
		// Body is null on GitHub when the description is empty.
		Body   string        `json:"body"`
		Labels []githubLabel `json:"labels"`
		// State is open or closed on both forges.
		State  string       `json:"state"`
		User   githubUser   `json:"user"`
		Merged bool         `json:"merged"`
		Head   githubBranch `json:"head"`
		Base   githubBranch `json:"base"`
		// UpdatedAt is RFC 3339 on both forges.
		UpdatedAt string `json:"updated_at"`
	} `json:"pull_request"`
	Repository githubRepo `json:"repository"`
}

// headCommit finds the commit a push moved the branch to.
func (p *githubPush) headCommit() *githubCommit {
	if p.HeadCommit != nil {
		return p.HeadCommit
	}
	for i := range p.Commits {
		if p.Commits[i].ID == p.After {
			return &p.Commits[i]
		}
	}
	return nil
}

// event converts a GitHub-shaped push for forge f.
func (p *githubPush) event(what string) (Event, error) {
	e, err := pushEvent(what, p.Ref, p.Before, p.After, p.Deleted)
	if err != nil {
		return Event{}, err
	}
	e.ForgeRepo = p.Repository.FullName
	e.Author = firstNonEmpty(p.Pusher.Login, p.Pusher.Name, p.Sender.Login)
	if c := p.headCommit(); c != nil {
		e.Message = c.Message
		e.Author = firstNonEmpty(c.Author.Username, c.Author.Name, e.Author)
	}
	return e, nil
}

// event converts a GitHub-shaped pull request whose action has already
// been mapped to knit's.
func (p *githubPullRequest) event(what string, action Action) (Event, error) {
	pr := p.PullRequest
	if pr == nil {
		return Event{}, fmt.Errorf("%s payload: missing pull_request", what)
	}
	e := Event{
		Kind:       KindPullRequest,
		ForgeRepo:  p.Repository.FullName,
		Number:     firstPositive(p.Number, pr.Number),
		Action:     action,
		Merged:     action == ActionClosed && pr.Merged,
		HeadBranch: pr.Head.Ref,
		HeadSHA:    pr.Head.SHA,
		BaseBranch: pr.Base.Ref,
		Title:      pr.Title,
		Body:       pr.Body,
		Author:     firstNonEmpty(pr.User.Login, pr.User.Username),
		UpdatedAt:  parseTime(pr.UpdatedAt),
	}
	if pr.Head.Repo != nil {
		e.HeadRepo = pr.Head.Repo.FullName
	}
	for _, l := range pr.Labels {
		e.Labels = append(e.Labels, l.Name)
	}
	if err := checkPullRequest(what, e); err != nil {
		return Event{}, err
	}
	return e, nil
}

// firstPositive returns a if it is positive, else b.
func firstPositive(a, b int64) int64 {
	if a > 0 {
		return a
	}
	return b
}

// verifyGitHub checks X-Hub-Signature-256.
func verifyGitHub(h http.Header, body, secret []byte, _ time.Time) error {
	if err := VerifyHMACSHA256(secret, body, h.Get(headerGitHubSignature)); err != nil {
		return fmt.Errorf("%s: %w", headerGitHubSignature, err)
	}
	return nil
}

// githubActions maps GitHub's pull_request actions to knit's. Label and
// description (or title, or base) changes are edits, since a canary is
// asked for there; the rest (assigned, review_requested,
// ready_for_review, …) are ignored.
var githubActions = map[string]Action{
	"opened":      ActionOpened,
	"synchronize": ActionSynchronize,
	"reopened":    ActionReopened,
	"closed":      ActionClosed,
	"edited":      ActionEdited,
	"labeled":     ActionEdited,
	"unlabeled":   ActionEdited,
}

// parseGitHub reads a GitHub webhook of the type in X-GitHub-Event.
func parseGitHub(h http.Header, body []byte, _ string) (Event, error) {
	typ := h.Get(headerGitHubEvent)
	if typ == "" {
		return Event{}, fmt.Errorf("missing %s header", headerGitHubEvent)
	}
	if typ == "ping" {
		return Event{}, &ignoredError{status: http.StatusOK, reason: "ping: hook verified, pong"}
	}
	if typ != "push" && typ != "pull_request" {
		return Event{}, ignore("github event %q is not handled", typ)
	}
	return parseGitHubShaped(h, body, "github", typ, githubActions, githubFork)
}

// githubFork says whether a pull request's head lives outside the base
// repository. It fails closed: a head repository GitHub no longer shows
// (a deleted fork) or one that differs by id or full name is a fork.
func githubFork(p *githubPullRequest) bool {
	head, base := p.PullRequest.Head.Repo, p.PullRequest.Base.Repo
	if head == nil || head.FullName == "" || !strings.EqualFold(head.FullName, p.Repository.FullName) {
		return true
	}
	return base != nil && head.ID != 0 && base.ID != 0 && head.ID != base.ID
}

// parseGitHubShaped reads a push or pull_request payload in GitHub's shape,
// which Gitea and Forgejo share; only the actions and how a fork shows
// differ.
func parseGitHubShaped(h http.Header, body []byte, forge, typ string, actions map[string]Action, fork func(*githubPullRequest) bool) (Event, error) {
	doc, err := jsonBody(h, body)
	if err != nil {
		return Event{}, fmt.Errorf("%s %s: %w", forge, typ, err)
	}
	what := forge + " " + typ
	if typ == "push" {
		var p githubPush
		if err := decode(doc, &p, what); err != nil {
			return Event{}, err
		}
		return p.event(what)
	}
	var p githubPullRequest
	if err := decode(doc, &p, what); err != nil {
		return Event{}, err
	}
	action, ok := actions[p.Action]
	if !ok {
		return Event{}, ignore("%s pull_request action %q is not handled", forge, p.Action)
	}
	if action == ActionEdited && p.PullRequest != nil && p.PullRequest.State != "" && p.PullRequest.State != "open" {
		return Event{}, ignore("%s pull_request %q of a %s pull request: nothing to roll out", forge, p.Action, p.PullRequest.State)
	}
	e, err := p.event(what, action)
	if err != nil {
		return Event{}, err
	}
	e.Fork = fork(&p)
	return e, nil
}
