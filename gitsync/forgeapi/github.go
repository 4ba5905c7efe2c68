package forgeapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/knitops/knit/gitsync/forge"
)

// githubClient speaks GitHub's REST API, and Gitea's (and Forgejo's),
// which copies GitHub's paths and shapes for everything knit calls but
// the merge.
type githubClient struct {
	t *transport
	// repo is /repos/<owner>/<name>, below the API base.
	repo string
}

// githubStatus is the body of POST /repos/{o}/{r}/statuses/{sha}:
// GitHub's "create a commit status", Gitea's CreateStatusOption.
type githubStatus struct {
	State       string `json:"state"`
	TargetURL   string `json:"target_url,omitempty"`
	Description string `json:"description,omitempty"`
	Context     string `json:"context"`
}

// githubComment is an issue comment as both list and body.
type githubComment struct {
	ID   int64  `json:"id,omitempty"`
	Body string `json:"body"`
}

func (c *githubClient) SetStatus(ctx context.Context, sha string, s Status) error {
	if err := s.check(sha); err != nil {
		return fmt.Errorf("set status: %w", err)
	}
	// GitHub's and Gitea's states are knit's: pending, success, failure, error.
	in := githubStatus{State: string(s.State), TargetURL: s.TargetURL, Description: s.description(), Context: s.Context}
	if _, err := c.t.do(ctx, call{method: http.MethodPost, path: c.repo + "/statuses/" + url.PathEscape(sha), in: in}); err != nil {
		return fmt.Errorf("set status %s=%s on %s: %w", s.Context, s.State, shortSHA(sha), err)
	}
	return nil
}

func (c *githubClient) UpsertComment(ctx context.Context, number int64, marker, body string) error {
	return upsertComment(ctx, c, number, marker, body)
}

func (c *githubClient) Merge(ctx context.Context, number int64, sha string) error {
	if err := checkMerge(number, sha); err != nil {
		return err
	}
	path := c.repo + "/pulls/" + strconv.FormatInt(number, 10) + "/merge"
	// GitHub: PUT, sha pins the head (409 when it moved), merge_method
	// defaults to merge. Gitea: POST with its MergePullRequestOption,
	// whose Do is required and head_commit_id pins the head.
	mc := call{method: http.MethodPut, path: path, in: struct {
		SHA string `json:"sha"`
	}{sha}}
	if c.t.provider == forge.ForgeGitea {
		mc = call{method: http.MethodPost, path: path, in: struct {
			Do           string `json:"Do"`
			HeadCommitID string `json:"head_commit_id"`
		}{"merge", sha}}
	}
	if _, err := c.t.do(ctx, mc); err != nil {
		return fmt.Errorf("merge #%d: %w", number, err)
	}
	return nil
}

func (c *githubClient) listComments(ctx context.Context, number int64) ([]comment, error) {
	var q url.Values
	if c.t.provider == forge.ForgeGitHub {
		// Gitea lists an issue's comments in one answer and has no per_page.
		q = url.Values{"per_page": {"100"}}
	}
	list, err := getAll[githubComment](ctx, c.t, c.repo+"/issues/"+strconv.FormatInt(number, 10)+"/comments", q)
	if err != nil {
		return nil, err
	}
	out := make([]comment, 0, len(list))
	for _, gc := range list {
		out = append(out, comment{ID: gc.ID, Body: gc.Body})
	}
	return out, nil
}

func (c *githubClient) createComment(ctx context.Context, number int64, body string) error {
	_, err := c.t.do(ctx, call{method: http.MethodPost, path: c.repo + "/issues/" + strconv.FormatInt(number, 10) + "/comments", in: githubComment{Body: body}})
	return err
}

func (c *githubClient) editComment(ctx context.Context, _, id int64, body string) error {
	_, err := c.t.do(ctx, call{method: http.MethodPatch, path: c.repo + "/issues/comments/" + strconv.FormatInt(id, 10), in: githubComment{Body: body}})
	return err
}

func (c *githubClient) deleteComment(ctx context.Context, _, id int64) error {
	_, err := c.t.do(ctx, call{method: http.MethodDelete, path: c.repo + "/issues/comments/" + strconv.FormatInt(id, 10)})
	return err
}

// checkMerge refuses a merge that names no pull request or no head: an
// unpinned merge would take whatever the head is by then.
func checkMerge(number int64, sha string) error {
	if number <= 0 {
		return fmt.Errorf("merge: pull request number %d is not positive", number)
	}
	if strings.TrimSpace(sha) == "" {
		return fmt.Errorf("merge #%d: no head commit to pin the merge to", number)
	}
	return nil
}

// shortSHA abbreviates a commit for messages.
func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
