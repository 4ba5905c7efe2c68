package forge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// GitLab's webhook headers.
const (
	headerGitLabEvent    = "X-Gitlab-Event"
	headerGitLabDelivery = "X-Gitlab-Event-UUID"
	headerGitLabToken    = "X-Gitlab-Token"
)

// GitLab's event names in X-Gitlab-Event that knit acts on.
const (
	gitlabPushHook         = "Push Hook"
	gitlabMergeRequestHook = "Merge Request Hook"
)

// gitlabProject is a project as GitLab payloads show it.
type gitlabProject struct {
	ID                int64  `json:"id"`
	PathWithNamespace string `json:"path_with_namespace"`
}

// gitlabPush is the part of a GitLab Push Hook payload knit reads.
type gitlabPush struct {
	Ref          string        `json:"ref"`
	Before       string        `json:"before"`
	After        string        `json:"after"`
	UserUsername string        `json:"user_username"`
	Project      gitlabProject `json:"project"`
	Commits      []struct {
		ID      string `json:"id"`
		Message string `json:"message"`
		Author  struct {
			Name  string `json:"name"`
			Email string `json:"email"`
		} `json:"author"`
	} `json:"commits"`
}

// gitlabLabel is a label as GitLab payloads show it: named by its title.
type gitlabLabel struct {
	Title string `json:"title"`
}

// gitlabMergeRequest is the part of a GitLab Merge Request Hook payload knit reads.
type gitlabMergeRequest struct {
	User struct {
		Username string `json:"username"`
		Name     string `json:"name"`
	} `json:"user"`
	Project gitlabProject `json:"project"`
	// Labels are the merge request's labels after the event.
	Labels []gitlabLabel `json:"labels"`
	// Changes names the attributes an update changed, each with its
	// previous and current value; knit only looks at which are present.
	Changes          map[string]json.RawMessage `json:"changes"`
	ObjectAttributes *struct {
		IID         int64  `json:"iid"`
		Title       string `json:"title"`
		Description string `json:"description"`
		// State is opened, closed, merged or locked.
		State string `json:"state"`
		// Labels repeats the top-level labels in newer GitLab versions.
		Labels          []gitlabLabel `json:"labels"`
		SourceBranch    string        `json:"source_branch"`
		TargetBranch    string        `json:"target_branch"`
		SourceProjectID int64         `json:"source_project_id"`
		TargetProjectID int64         `json:"target_project_id"`
		Action          string        `json:"action"`
		OldRev          string        `json:"oldrev"`
		// UpdatedAt is "2006-01-02 15:04:05 UTC" or RFC 3339 by version.
		UpdatedAt  string `json:"updated_at"`
		LastCommit struct {
			ID string `json:"id"`
		} `json:"last_commit"`
	} `json:"object_attributes"`
}

// verifyGitLab checks a GitLab delivery. With a signing secret
// (SigningSecretPrefix) it must carry a Standard Webhooks signature over
// its id, timestamp and body, within SignatureTolerance; X-Gitlab-Token
// alone is refused. Otherwise X-Gitlab-Token must be the secret itself: a
// static password that proves nothing about the body or its age, so
// anyone who sees one delivery can forge others. knit treats it as such a
// shared secret; the signing token is the stronger option.
func verifyGitLab(h http.Header, body, secret []byte, now time.Time) error {
	if isSigningSecret(secret) {
		if err := VerifyStandardWebhook(h, body, secret, now); err != nil {
			return fmt.Errorf("%s: %w", headerWebhookSignature, err)
		}
		return nil
	}
	if err := VerifyToken(secret, h.Get(headerGitLabToken)); err != nil {
		return fmt.Errorf("%s: %w", headerGitLabToken, err)
	}
	return nil
}

// gitlabEdits are the attributes whose change in an "update" reaches knit
// as ActionEdited: where a canary is asked for (labels, description) and
// what GitHub's "edited" also covers (title, base branch).
var gitlabEdits = []string{"labels", "description", "title", "target_branch"}

// gitlabAction maps a merge request's action to knit's. GitLab's "update"
// is a new push when oldrev is set, an edit when one of gitlabEdits
// changed, and otherwise (assignees, reviewers, milestone, only
// updated_at) ignored, as approvals are.
func gitlabAction(action, oldRev string, changes map[string]json.RawMessage) (a Action, merged, ok bool) {
	switch action {
	case "open":
		return ActionOpened, false, true
	case "reopen":
		return ActionReopened, false, true
	case "update":
		if oldRev != "" {
			return ActionSynchronize, false, true
		}
		for _, k := range gitlabEdits {
			if _, changed := changes[k]; changed {
				return ActionEdited, false, true
			}
		}
		return "", false, false
	case "close":
		return ActionClosed, false, true
	case "merge":
		return ActionClosed, true, true
	}
	return "", false, false
}

// parseGitLab reads a GitLab webhook of the type in X-Gitlab-Event.
func parseGitLab(h http.Header, body []byte, _ string) (Event, error) {
	typ := h.Get(headerGitLabEvent)
	switch typ {
	case "":
		return Event{}, fmt.Errorf("missing %s header", headerGitLabEvent)
	case gitlabPushHook:
		what := "gitlab push"
		var p gitlabPush
		if err := decode(body, &p, what); err != nil {
			return Event{}, err
		}
		e, err := pushEvent(what, p.Ref, p.Before, p.After, false)
		if err != nil {
			return Event{}, err
		}
		e.ForgeRepo = p.Project.PathWithNamespace
		e.Author = p.UserUsername
		for _, c := range p.Commits {
			if c.ID == p.After {
				e.Message = c.Message
				e.Author = firstNonEmpty(c.Author.Name, e.Author)
			}
		}
		return e, nil
	case gitlabMergeRequestHook:
		what := "gitlab merge request"
		var p gitlabMergeRequest
		if err := decode(body, &p, what); err != nil {
			return Event{}, err
		}
		mr := p.ObjectAttributes
		if mr == nil {
			return Event{}, fmt.Errorf("%s payload: missing object_attributes", what)
		}
		action, merged, ok := gitlabAction(mr.Action, mr.OldRev, p.Changes)
		if !ok {
			return Event{}, ignore("gitlab merge request action %q is not handled", mr.Action)
		}
		if action == ActionEdited && mr.State != "" && mr.State != "opened" {
			return Event{}, ignore("gitlab merge request update of a %s merge request: nothing to roll out", mr.State)
		}
		e := Event{
			Kind:       KindPullRequest,
			ForgeRepo:  p.Project.PathWithNamespace,
			Number:     mr.IID,
			Action:     action,
			Merged:     merged,
			HeadBranch: mr.SourceBranch,
			HeadSHA:    mr.LastCommit.ID,
			// Fails closed: a payload without both project ids is a fork.
			Fork:       mr.SourceProjectID == 0 || mr.TargetProjectID == 0 || mr.SourceProjectID != mr.TargetProjectID,
			UpdatedAt:  parseTime(mr.UpdatedAt),
			BaseBranch: mr.TargetBranch,
			Title:      mr.Title,
			Body:       mr.Description,
			Author:     firstNonEmpty(p.User.Username, p.User.Name),
		}
		labels := p.Labels
		if labels == nil {
			labels = mr.Labels
		}
		for _, l := range labels {
			e.Labels = append(e.Labels, l.Title)
		}
		if err := checkPullRequest(what, e); err != nil {
			return Event{}, err
		}
		return e, nil
	}
	return Event{}, ignore("gitlab event %q is not handled", typ)
}
