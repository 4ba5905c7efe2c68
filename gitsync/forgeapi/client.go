package forgeapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/knitops/knit/gitsync/forge"
)

// Client is knit's side of a conversation with one repository's pull
// requests. Implementations are safe for concurrent use.
type Client interface {
	// SetStatus sets a commit status (context e.g. "knit/preview" or
	// "knit/canary") on sha. Setting the same context again replaces it.
	SetStatus(ctx context.Context, sha string, s Status) error
	// UpsertComment keeps exactly one comment of knit's on pull request
	// number that carries marker (an HTML comment like
	// <!-- knit:preview -->, invisible when rendered): edits it when
	// present, creates it otherwise, and deletes any duplicates a race
	// or a retried create left behind. The marker is prepended to body
	// unless body already starts with it.
	UpsertComment(ctx context.Context, number int64, marker, body string) error
	// Merge merges pull request number (automerge after a canary passes)
	// with the repository's default merge commit, only if its head is
	// still sha, the commit the canary analysed: the forge refuses the
	// merge when the head moved (GitHub 409, Gitea and GitLab 409/405),
	// so a push after the analysis is never merged unseen.
	Merge(ctx context.Context, number int64, sha string) error
}

// State is a commit status's state in GitHub's words; each forge's
// client maps it to its own.
type State string

// States of a commit status.
const (
	StatePending State = "pending"
	StateSuccess State = "success"
	StateFailure State = "failure"
	// StateError says knit could not decide, rather than the change failed.
	StateError State = "error"
)

// Status is a commit status as knit reports it.
type Status struct {
	// Context names the check, e.g. "knit/preview"; a later status with
	// the same context replaces the earlier one. GitLab calls it name.
	Context string
	// State of the check.
	State State
	// TargetURL is where the status links to (the preview URL); optional.
	TargetURL string
	// Description is a short summary, cut to MaxDescription runes.
	Description string
}

// MaxDescription bounds a status description: GitHub rejects longer ones
// with 422, and the others show no more in a status line anyway.
const MaxDescription = 140

// check reports what is wrong with s for sha.
func (s Status) check(sha string) error {
	var errs []error
	if strings.TrimSpace(sha) == "" {
		errs = append(errs, errors.New("empty commit sha"))
	}
	if s.Context == "" {
		errs = append(errs, errors.New("empty status context"))
	}
	switch s.State {
	case StatePending, StateSuccess, StateFailure, StateError:
	default:
		errs = append(errs, fmt.Errorf("status state %q is not pending, success, failure or error", s.State))
	}
	return errors.Join(errs...)
}

// description is s.Description cut to MaxDescription runes.
func (s Status) description() string {
	d := s.Description
	if utf8.RuneCountInString(d) <= MaxDescription {
		return d
	}
	r := []rune(d)
	return string(r[:MaxDescription-1]) + "…"
}

// New returns the Client for o.Provider, after o.Validate.
func New(o Options) (Client, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Egress != nil {
		if err := o.Egress().CheckURL(o.APIURL); err != nil {
			return nil, fmt.Errorf("forge API %s: %w", redactURL(o.APIURL), err)
		}
	}
	t := newTransport(&o)
	switch o.Provider {
	case forge.ForgeGitHub, forge.ForgeGitea:
		return &githubClient{t: t, repo: "/repos/" + o.repo}, nil
	case forge.ForgeGitLab:
		return &gitlabClient{t: t, project: "/projects/" + o.repo}, nil
	}
	return nil, fmt.Errorf("forge API: provider %q is not supported", o.Provider)
}
