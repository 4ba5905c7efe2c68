package forgeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// gitlabClient speaks GitLab's REST API v4.
type gitlabClient struct {
	t *transport
	// project is /projects/<URL-escaped path>, below the API base.
	project string
}

// gitlabStatus is the body of POST /projects/:id/statuses/:sha.
type gitlabStatus struct {
	State       string `json:"state"`
	Name        string `json:"name"`
	TargetURL   string `json:"target_url,omitempty"`
	Description string `json:"description,omitempty"`
}

// gitlabNote is a merge request note as both list and body.
type gitlabNote struct {
	ID   int64  `json:"id,omitempty"`
	Body string `json:"body"`
	// System notes are GitLab's own ("added 1 commit"), never knit's.
	System bool `json:"system,omitempty"`
}

// gitlabStates maps knit's states to GitLab's pending, running, success,
// failed, canceled: GitLab has no "error", so knit's error is failed.
var gitlabStates = map[State]string{
	StatePending: "pending",
	StateSuccess: "success",
	StateFailure: "failed",
	StateError:   "failed",
}

func (c *gitlabClient) SetStatus(ctx context.Context, sha string, s Status) error {
	if err := s.check(sha); err != nil {
		return fmt.Errorf("set status: %w", err)
	}
	in := gitlabStatus{State: gitlabStates[s.State], Name: s.Context, TargetURL: s.TargetURL, Description: s.description()}
	_, err := c.t.do(ctx, call{method: http.MethodPost, path: c.project + "/statuses/" + url.PathEscape(sha), in: in})
	if err != nil && s.State == StatePending && alreadyPending(err) {
		// GitLab refuses pending over a pending or running status of the
		// same name (400 "Cannot transition status via :enqueue from
		// :pending"), where GitHub takes it as a no-op: it is one here too.
		c.t.log.Debug("gitlab status already pending", "context", s.Context, "sha", shortSHA(sha))
		return nil
	}
	if err != nil {
		return fmt.Errorf("set status %s=%s on %s: %w", s.Context, s.State, shortSHA(sha), err)
	}
	return nil
}

// alreadyPending recognises GitLab's refusal to re-enqueue a status.
func alreadyPending(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusBadRequest &&
		(strings.Contains(ae.Message, "via :enqueue from :pending") || strings.Contains(ae.Message, "via :enqueue from :running"))
}

func (c *gitlabClient) UpsertComment(ctx context.Context, number int64, marker, body string) error {
	return upsertComment(ctx, c, number, marker, body)
}

func (c *gitlabClient) Merge(ctx context.Context, number int64, sha string) error {
	if err := checkMerge(number, sha); err != nil {
		return err
	}
	// sha must be the source branch's head, or GitLab refuses (409).
	in := struct {
		SHA string `json:"sha"`
	}{sha}
	if _, err := c.t.do(ctx, call{method: http.MethodPut, path: c.mr(number) + "/merge", in: in}); err != nil {
		return fmt.Errorf("merge !%d: %w", number, err)
	}
	return nil
}

// mr is the path of merge request iid.
func (c *gitlabClient) mr(iid int64) string {
	return c.project + "/merge_requests/" + strconv.FormatInt(iid, 10)
}

func (c *gitlabClient) listComments(ctx context.Context, number int64) ([]comment, error) {
	// Notes come newest first unless asked otherwise.
	q := url.Values{"sort": {"asc"}, "order_by": {"created_at"}, "per_page": {"100"}}
	notes, err := getAll[gitlabNote](ctx, c.t, c.mr(number)+"/notes", q)
	if err != nil {
		return nil, err
	}
	out := make([]comment, 0, len(notes))
	for _, n := range notes {
		if !n.System {
			out = append(out, comment{ID: n.ID, Body: n.Body})
		}
	}
	return out, nil
}

func (c *gitlabClient) createComment(ctx context.Context, number int64, body string) error {
	_, err := c.t.do(ctx, call{method: http.MethodPost, path: c.mr(number) + "/notes", in: gitlabNote{Body: body}})
	return err
}

func (c *gitlabClient) editComment(ctx context.Context, number, id int64, body string) error {
	_, err := c.t.do(ctx, call{method: http.MethodPut, path: c.mr(number) + "/notes/" + strconv.FormatInt(id, 10), in: gitlabNote{Body: body}})
	return err
}

func (c *gitlabClient) deleteComment(ctx context.Context, number, id int64) error {
	_, err := c.t.do(ctx, call{method: http.MethodDelete, path: c.mr(number) + "/notes/" + strconv.FormatInt(id, 10)})
	return err
}
