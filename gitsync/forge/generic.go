package forge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Headers of knit's generic webhook.
const (
	// HeaderGenericSignature carries "sha256=<hex HMAC-SHA256 of the body>".
	HeaderGenericSignature = "X-Knit-Signature-256"
	// HeaderGenericDelivery carries a unique id per delivery, repeated on retries.
	HeaderGenericDelivery = "X-Knit-Delivery"
)

// GenericPayload is the body of a generic webhook, documented in the
// package comment. Senders may marshal it directly.
type GenericPayload struct {
	// Kind is push or pull_request.
	Kind Kind `json:"kind"`
	// Repo, when set, must equal the <repo> of the URL: a guard against
	// a sender posting to the wrong hook.
	Repo string `json:"repo,omitempty"`
	// Branch pushed, or the pull request's head branch.
	Branch string `json:"branch"`
	// SHA is the branch's new head, or the pull request's head commit.
	SHA string `json:"sha,omitempty"`
	// Before is the branch's previous head (push).
	Before string `json:"before,omitempty"`
	// Deleted says the push deleted the branch.
	Deleted bool `json:"deleted,omitempty"`
	// Author of the head commit or the pull request.
	Author string `json:"author,omitempty"`
	// Message of the head commit (push).
	Message string `json:"message,omitempty"`
	// PR describes the pull request; required for kind pull_request.
	PR *GenericPullRequest `json:"pr,omitempty"`
}

// GenericPullRequest is the pull-request part of a GenericPayload.
type GenericPullRequest struct {
	// Number of the pull request, positive.
	Number int64 `json:"number"`
	// Action is opened, synchronize, reopened, closed or edited.
	Action Action `json:"action"`
	// Merged, with action closed, says the change was merged.
	Merged bool `json:"merged,omitempty"`
	// Base is the branch the change would merge into.
	Base string `json:"base"`
	// Title of the pull request.
	Title string `json:"title,omitempty"`
	// Body is the pull request's description, where a canary may be asked for.
	Body string `json:"body,omitempty"`
	// Labels are the names of the pull request's labels.
	Labels []string `json:"labels,omitempty"`
	// Fork says the head branch lives in another repository.
	Fork bool `json:"fork,omitempty"`
}

// verifyGeneric checks X-Knit-Signature-256.
func verifyGeneric(h http.Header, body, secret []byte, _ time.Time) error {
	if err := VerifyHMACSHA256(secret, body, h.Get(HeaderGenericSignature)); err != nil {
		return fmt.Errorf("%s: %w", HeaderGenericSignature, err)
	}
	return nil
}

// parseGeneric reads a generic webhook. The format is knit's own, so
// unknown fields, kinds and actions are errors (400), not ignored.
func parseGeneric(_ http.Header, body []byte, repo string) (Event, error) {
	const what = "generic"
	var p GenericPayload
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Event{}, fmt.Errorf("malformed %s payload: %w", what, err)
	}
	if p.Repo != "" && p.Repo != repo {
		return Event{}, fmt.Errorf("%s payload: repo %q does not match the hook's repository %q", what, p.Repo, repo)
	}
	switch p.Kind {
	case KindPush:
		if p.Branch == "" {
			return Event{}, fmt.Errorf("%s payload: missing branch", what)
		}
		e, err := pushEvent(what+" push", branchPrefix+p.Branch, p.Before, p.SHA, p.Deleted)
		if err != nil {
			return Event{}, err
		}
		e.Author, e.Message = p.Author, p.Message
		return e, nil
	case KindPullRequest:
		if p.PR == nil {
			return Event{}, fmt.Errorf("%s payload: kind pull_request needs pr", what)
		}
		switch p.PR.Action {
		case ActionOpened, ActionSynchronize, ActionReopened, ActionClosed, ActionEdited:
		default:
			return Event{}, fmt.Errorf("%s payload: pr.action %q is not one of opened, synchronize, reopened, closed, edited", what, p.PR.Action)
		}
		e := Event{
			Kind:       KindPullRequest,
			Number:     p.PR.Number,
			Action:     p.PR.Action,
			Merged:     p.PR.Action == ActionClosed && p.PR.Merged,
			HeadBranch: p.Branch,
			HeadSHA:    p.SHA,
			Fork:       p.PR.Fork,
			BaseBranch: p.PR.Base,
			Title:      p.PR.Title,
			Body:       p.PR.Body,
			Author:     p.Author,
		}
		if len(p.PR.Labels) > 0 {
			e.Labels = p.PR.Labels
		}
		if err := checkPullRequest(what+" pull_request", e); err != nil {
			return Event{}, err
		}
		return e, nil
	}
	return Event{}, fmt.Errorf("%s payload: kind %q is not push or pull_request", what, p.Kind)
}
