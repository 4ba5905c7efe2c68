package forge

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Gitea's webhook headers; Forgejo sends the same with X-Forgejo-.
var (
	headersGiteaEvent     = []string{"X-Gitea-Event", "X-Forgejo-Event"}
	headersGiteaDelivery  = []string{"X-Gitea-Delivery", "X-Forgejo-Delivery"}
	headersGiteaSignature = []string{"X-Gitea-Signature", "X-Forgejo-Signature"}
)

// verifyGitea checks X-Gitea-Signature: hex HMAC-SHA256 of the body, no prefix.
func verifyGitea(h http.Header, body, secret []byte, _ time.Time) error {
	if err := VerifyHMACSHA256(secret, body, headerOf(h, headersGiteaSignature...)); err != nil {
		return fmt.Errorf("%s: %w", headersGiteaSignature[0], err)
	}
	return nil
}

// giteaActions maps Gitea's pull_request actions to knit's. Gitea says
// "synchronized" where GitHub says "synchronize", and label changes
// arrive as pull_request events with action label_updated or
// label_cleared (X-Gitea-Event-Type: pull_request_label); those and
// description edits are edits. Assignee, milestone and review-request
// changes arrive as pull_request too and are ignored.
var giteaActions = map[string]Action{
	"opened":        ActionOpened,
	"synchronized":  ActionSynchronize,
	"reopened":      ActionReopened,
	"closed":        ActionClosed,
	"edited":        ActionEdited,
	"label_updated": ActionEdited,
	"label_cleared": ActionEdited,
}

// parseGitea reads a Gitea webhook of the type in X-Gitea-Event. Gitea's
// payloads follow GitHub's shapes.
func parseGitea(h http.Header, body []byte, _ string) (Event, error) {
	typ := headerOf(h, headersGiteaEvent...)
	if typ == "" {
		return Event{}, fmt.Errorf("missing %s header", headersGiteaEvent[0])
	}
	if typ != "push" && typ != "pull_request" {
		return Event{}, ignore("gitea event %q is not handled", typ)
	}
	return parseGitHubShaped(h, body, "gitea", typ, giteaActions, giteaFork)
}

// giteaFork says whether a pull request's head lives outside the base
// repository, by repository id and, when the payload names them, full
// name. It fails closed: a payload that identifies neither repository is
// a fork, since the head cannot be shown to be the base's own branch.
func giteaFork(p *githubPullRequest) bool {
	head, base := p.PullRequest.Head, p.PullRequest.Base
	headID, baseID := firstPositive(head.RepoID, repoID(head.Repo)), firstPositive(base.RepoID, repoID(base.Repo))
	if headID == 0 || baseID == 0 || headID != baseID {
		return true
	}
	return head.Repo != nil && base.Repo != nil && !strings.EqualFold(head.Repo.FullName, base.Repo.FullName)
}

// repoID is r's id, 0 when r is nil.
func repoID(r *githubRepo) int64 {
	if r == nil {
		return 0
	}
	return r.ID
}
