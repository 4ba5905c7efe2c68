package forge

import (
	"fmt"
	"net/http"
)

// Gitea's webhook headers; Forgejo sends the same with X-Forgejo-.
var (
	headersGiteaEvent     = []string{"X-Gitea-Event", "X-Forgejo-Event"}
	headersGiteaDelivery  = []string{"X-Gitea-Delivery", "X-Forgejo-Delivery"}
	headersGiteaSignature = []string{"X-Gitea-Signature", "X-Forgejo-Signature"}
)

// verifyGitea checks X-Gitea-Signature: hex HMAC-SHA256 of the body, no prefix.
func verifyGitea(h http.Header, body, secret []byte) error {
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
	return parseGitHubShaped(h, body, "gitea", typ, giteaActions, func(p *githubPullRequest) bool {
		head, base := p.PullRequest.Head, p.PullRequest.Base
		return head.RepoID != 0 && base.RepoID != 0 && head.RepoID != base.RepoID
	})
}
