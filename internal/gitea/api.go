package gitea

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/knitops/knit/internal/poll"
)

// The API's answers, as much of them as knit's journeys look at. Field
// names follow Gitea's JSON, not GitHub's: a commit status in a list says
// "status" where GitHub (and Gitea's combined status) say "state".

// Repo is a repository.
type Repo struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	FullName      string `json:"full_name"`
	CloneURL      string `json:"clone_url"`
	HTMLURL       string `json:"html_url"`
	DefaultBranch string `json:"default_branch"`
}

// Hook is a repository webhook.
type Hook struct {
	ID     int64             `json:"id"`
	Type   string            `json:"type"`
	Active bool              `json:"active"`
	Events []string          `json:"events"`
	Config map[string]string `json:"config"`
}

// Branch is the end of a pull request, or a branch.
type Branch struct {
	Ref string `json:"ref"`
	SHA string `json:"sha"`
}

// Label is a repository label, as pull requests carry them.
type Label struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// PullRequest is a pull request.
type PullRequest struct {
	ID             int64   `json:"id"`
	Number         int64   `json:"number"`
	State          string  `json:"state"` // open or closed
	Title          string  `json:"title"`
	Body           string  `json:"body"`
	Merged         bool    `json:"merged"`
	MergeCommitSHA string  `json:"merge_commit_sha"`
	Head           Branch  `json:"head"`
	Base           Branch  `json:"base"`
	Labels         []Label `json:"labels"`
	HTMLURL        string  `json:"html_url"`
}

// User is who wrote a comment.
type User struct {
	Login string `json:"login"`
}

// Status is one commit status as posted: Gitea keeps every one, so a
// context's current status is the newest with that context.
type Status struct {
	ID          int64     `json:"id"`
	Context     string    `json:"context"`
	State       string    `json:"status"` // pending, success, error, failure, warning
	TargetURL   string    `json:"target_url"`
	Description string    `json:"description"`
	Created     time.Time `json:"created_at"`
}

// Comment is a comment on a pull request (an issue comment, to Gitea).
type Comment struct {
	ID      int64     `json:"id"`
	Body    string    `json:"body"`
	User    User      `json:"user"`
	Created time.Time `json:"created_at"`
	Updated time.Time `json:"updated_at"`
}

// CloneURL is the HTTP URL of the user's repository with the user and
// token in it, what `git push` and `git fetch` take without a credential
// helper.
func (s *Server) CloneURL(repo string) string {
	u, err := url.Parse(s.URL)
	if err != nil {
		s.t.Fatalf("gitea: server URL %q: %v", s.URL, err)
	}
	u.User = url.UserPassword(s.User, s.Token)
	u.Path = "/" + s.fullName(repo) + ".git"
	return u.String()
}

// SSHCloneURL is repo's ssh:// URL on the built-in SSH server
// (Options.SSH).
func (s *Server) SSHCloneURL(repo string) string {
	return "ssh://git@" + s.SSHAddr + "/" + s.fullName(repo) + ".git"
}

// KnownHosts is the built-in SSH server's known_hosts line, read from the
// host key Gitea made at its start.
func (s *Server) KnownHosts() string {
	s.t.Helper()
	pub, err := os.ReadFile(filepath.Join(s.Dir, "data", "ssh", "gitea.ed25519.pub"))
	if err != nil {
		s.t.Fatalf("gitea: the SSH host key: %v", err)
	}
	host, port, _ := strings.Cut(s.SSHAddr, ":")
	return "[" + host + "]:" + port + " " + strings.TrimSpace(string(pub)) + "\n"
}

// AddDeployKey gives the public key read access to repo, as a deploy key.
func (s *Server) AddDeployKey(repo, title, publicKey string) {
	s.t.Helper()
	s.must(http.MethodPost, s.repoPath(repo)+"/keys", map[string]any{"title": title, "key": publicKey, "read_only": true}, nil)
}

// CreateRepo creates an empty repository of the user with branch main as
// its default, failing the test when Gitea refuses.
func (s *Server) CreateRepo(name string) Repo {
	s.t.Helper()
	var r Repo
	s.must(http.MethodPost, "/user/repos", map[string]any{"name": name, "default_branch": "main", "auto_init": false}, &r)
	return r
}

// CreateBranch creates branch from another branch, as a user does in the
// forge's UI before pushing to it.
func (s *Server) CreateBranch(repo, branch, from string) {
	s.t.Helper()
	s.must(http.MethodPost, s.repoPath(repo)+"/branches", map[string]string{"new_branch_name": branch, "old_branch_name": from}, nil)
}

// CreateWebhook adds an active webhook of Gitea's own type with a JSON
// body, signed with secret (X-Gitea-Signature, and GitHub's
// X-Hub-Signature-256 beside it). No events means push and pull_request,
// what knit's GitOps needs; "pull_request" covers its sub-events
// (synchronized, comments, reviews).
func (s *Server) CreateWebhook(repo, hookURL, secret string, events ...string) Hook {
	s.t.Helper()
	if len(events) == 0 {
		events = []string{"push", "pull_request"}
	}
	var h Hook
	s.must(http.MethodPost, s.repoPath(repo)+"/hooks", map[string]any{
		"type": "gitea", "active": true, "events": events, "branch_filter": "*",
		"config": map[string]string{"url": hookURL, "content_type": "json", "secret": secret},
	}, &h)
	return h
}

// CreatePullRequest opens a pull request from head into base with the
// labels, created in the repository when missing, and returns its number.
func (s *Server) CreatePullRequest(repo, head, base, title, body string, labels ...string) int64 {
	s.t.Helper()
	ids := make([]int64, 0, len(labels))
	for _, name := range labels {
		id, err := s.label(repo, name)
		if err != nil {
			s.t.Fatalf("gitea: pull request %s → %s in %s: %v", head, base, repo, err)
		}
		ids = append(ids, id)
	}
	var pr PullRequest
	s.must(http.MethodPost, s.repoPath(repo)+"/pulls", map[string]any{
		"head": head, "base": base, "title": title, "body": body, "labels": ids,
	}, &pr)
	return pr.Number
}

// label finds the repository's label called name, or creates it.
func (s *Server) label(repo, name string) (int64, error) {
	labels, err := getAll[Label](s, s.repoPath(repo)+"/labels")
	if err != nil {
		return 0, fmt.Errorf("listing labels: %w", err)
	}
	for _, l := range labels {
		if l.Name == name {
			return l.ID, nil
		}
	}
	var l Label
	if err := s.API(http.MethodPost, s.repoPath(repo)+"/labels", map[string]string{"name": name, "color": "#0e8a16"}, &l); err != nil {
		return 0, fmt.Errorf("creating label %q: %w", name, err)
	}
	return l.ID, nil
}

// PullRequest reads a pull request.
func (s *Server) PullRequest(repo string, number int64) (PullRequest, error) {
	var pr PullRequest
	err := s.API(http.MethodGet, s.pullPath(repo, number), nil, &pr)
	return pr, err
}

// EditPullRequestBody replaces a pull request's description, where knit
// reads a canary request.
func (s *Server) EditPullRequestBody(repo string, number int64, body string) {
	s.t.Helper()
	s.must(http.MethodPatch, s.pullPath(repo, number), map[string]string{"body": body}, nil)
}

// ClosePullRequest closes a pull request without merging it.
func (s *Server) ClosePullRequest(repo string, number int64) {
	s.t.Helper()
	s.must(http.MethodPatch, s.pullPath(repo, number), map[string]string{"state": "closed"}, nil)
}

// MergePullRequest merges a pull request with a merge commit. Gitea checks
// a pull request's mergeability in the background after each push and
// refuses to merge until it has ("Please try again later"), so that
// answer is retried for up to 30 s.
func (s *Server) MergePullRequest(repo string, number int64) {
	s.t.Helper()
	var err error
	poll.Until(s.t, fmt.Sprintf("gitea: merging %s#%d", repo, number), 100*time.Millisecond, 30*time.Second,
		func(context.Context) (bool, string) {
			err = s.API(http.MethodPost, s.pullPath(repo, number)+"/merge", map[string]any{"Do": "merge"}, nil)
			var apiErr *APIError
			retry := errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusMethodNotAllowed &&
				strings.Contains(apiErr.Body, "try again later")
			return !retry, fmt.Sprint(err)
		})
	if err != nil {
		s.t.Fatalf("gitea: merging %s#%d: %v", repo, number, err)
	}
}

// BranchCommit is the SHA at the head of branch.
func (s *Server) BranchCommit(repo, branch string) string {
	s.t.Helper()
	var b struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	s.must(http.MethodGet, s.repoPath(repo)+"/branches/"+url.PathEscape(branch), nil, &b)
	return b.Commit.ID
}

// Statuses lists every commit status posted for sha, newest first.
func (s *Server) Statuses(repo, sha string) ([]Status, error) {
	// sort=leastindex orders by the per-commit index, descending: exact,
	// where the default (creation time in seconds) ties.
	return getAll[Status](s, s.repoPath(repo)+"/statuses/"+url.PathEscape(sha)+"?sort=leastindex")
}

// Comments lists the comments on a pull request, oldest first.
func (s *Server) Comments(repo string, number int64) ([]Comment, error) {
	// One answer holds them all: this list has no pages (its page and
	// limit are ignored, so getAll would loop).
	var cs []Comment
	err := s.API(http.MethodGet, s.repoPath(repo)+"/issues/"+strconv.FormatInt(number, 10)+"/comments", nil, &cs)
	return cs, err
}

// APIError is an answer of Gitea's API that was not the success expected.
type APIError struct {
	Method, Path string
	StatusCode   int
	Body         string // Gitea's answer, shortened
}

func (e *APIError) Error() string {
	return fmt.Sprintf("gitea %s %s: HTTP %d: %s", e.Method, e.Path, e.StatusCode, e.Body)
}

// API calls Gitea's REST API as the admin: path is under /api/v1 (a
// query may follow), in (when not nil) is sent as JSON, out (when not nil)
// receives the JSON answer. Any 2xx is success; anything else is an
// *APIError quoting Gitea's answer. For what no helper covers.
func (s *Server) API(method, path string, in, out any) error {
	return s.do(method, path, in, out, func(r *http.Request) {
		if s.Token != "" {
			r.Header.Set("Authorization", "token "+s.Token)
		}
	})
}

// must is API for a journey's steps: a refusal fails the test.
func (s *Server) must(method, path string, in, out any) {
	s.t.Helper()
	if err := s.API(method, path, in, out); err != nil {
		s.t.Fatal(err)
	}
}

func (s *Server) do(method, path string, in, out any, auth func(*http.Request)) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("gitea %s %s: encoding the request: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+"/api/v1"+path, body)
	if err != nil {
		return fmt.Errorf("gitea %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	auth(req)
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("gitea %s %s: %w", method, path, err)
	}
	defer drain(resp.Body)
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return &APIError{Method: method, Path: path, StatusCode: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("gitea %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// getAll reads every page of a list (Gitea answers at most 50 a page).
func getAll[T any](s *Server, path string) ([]T, error) {
	const limit = 50
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	var all []T
	for page := 1; ; page++ {
		var items []T
		if err := s.API(http.MethodGet, fmt.Sprintf("%s%slimit=%d&page=%d", path, sep, limit, page), nil, &items); err != nil {
			return nil, err
		}
		all = append(all, items...)
		if len(items) < limit {
			return all, nil
		}
	}
}

// fullName is owner/repo: a bare name is the admin's repository.
func (s *Server) fullName(repo string) string {
	if strings.Contains(repo, "/") {
		return repo
	}
	return s.User + "/" + repo
}

func (s *Server) repoPath(repo string) string {
	owner, name, _ := strings.Cut(s.fullName(repo), "/")
	return "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(name)
}

func (s *Server) pullPath(repo string, number int64) string {
	return s.repoPath(repo) + "/pulls/" + strconv.FormatInt(number, 10)
}
