//go:build !unit

package gitea

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knitops/knit/internal/poll"
)

// recorder is a testing.TB that keeps a Fatalf's message instead of
// stopping the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

// A missing binary is a failure that says how to get one, never a skip:
// a forge test that silently does not run proves nothing.
func TestStartWithoutBinary(t *testing.T) {
	r := &recorder{TB: t}
	if s := Start(r, Options{Binary: filepath.Join(t.TempDir(), "gitea")}); s != nil {
		t.Errorf("Start without a binary returned a server")
	}
	if !strings.Contains(r.failed, "make gitea") {
		t.Errorf("failure %q, want it to say `make gitea`", r.failed)
	}
}

// A server that does not come up fails the test with what it said.
func TestStartFailureShowsLog(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "gitea")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'boom: database is locked' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	if s := Start(r, Options{Binary: fake}); s != nil {
		t.Errorf("Start of a server that exits returned a server")
	}
	if !strings.Contains(r.failed, "exited before its API answered") || !strings.Contains(r.failed, "boom: database is locked") {
		t.Errorf("failure %q, want the exit and the server's output", r.failed)
	}
}

// delivery is one webhook request the forge made.
type delivery struct {
	event, signature string
	body             []byte
}

// hookReceiver records the forge's webhook deliveries.
type hookReceiver struct {
	mu   sync.Mutex
	seen []delivery
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.seen = append(h.seen, delivery{r.Header.Get("X-Gitea-Event"), r.Header.Get("X-Gitea-Signature"), body})
	h.mu.Unlock()
}

// wait returns the first delivery of event whose JSON body satisfies
// match, failing t when none comes within 20 s.
func (h *hookReceiver) wait(t *testing.T, what, event string, match func(map[string]any) bool) delivery {
	t.Helper()
	var found delivery
	poll.Until(t, what, 20*time.Millisecond, 20*time.Second, func(context.Context) (bool, string) {
		h.mu.Lock()
		defer h.mu.Unlock()
		var events []string
		for _, d := range h.seen {
			var m map[string]any
			if d.event == event && json.Unmarshal(d.body, &m) == nil && match(m) {
				found = d
				return true, ""
			}
			events = append(events, d.event)
		}
		return false, fmt.Sprintf("deliveries so far: %v", events)
	})
	return found
}

// The round trip knit's pull-request journeys make, against a real Gitea
// with the real git CLI: repository, push, webhook, branch, pull request,
// commit statuses, comments, merge, close.
func TestForge(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the git CLI is needed: %v", err)
	}
	s := Start(t, Options{})

	repo := s.CreateRepo("demo")
	if repo.FullName != "knit/demo" || repo.DefaultBranch != "main" {
		t.Fatalf("created repository %+v, want knit/demo with default branch main", repo)
	}
	receiver := &hookReceiver{}
	hooks := httptest.NewServer(receiver)
	t.Cleanup(hooks.Close)
	const secret = "s3cret"
	if h := s.CreateWebhook("demo", hooks.URL+"/hook", secret); !h.Active || h.Type != "gitea" {
		t.Fatalf("created webhook %+v, want an active one of type gitea", h)
	}

	g := newGit(t)
	g.write("service.yaml", "replicas: 1\n")
	mainSHA := g.commit("first")
	g.run("push", "--quiet", s.CloneURL("demo"), "main")
	d := receiver.wait(t, "push webhook for main", "push", func(m map[string]any) bool { return m["after"] == mainSHA })
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(d.body)
	if want := hex.EncodeToString(mac.Sum(nil)); d.signature != want {
		t.Errorf("push delivery signed %q, want HMAC-SHA256 %q", d.signature, want)
	}

	s.CreateBranch("demo", "feature", "main")
	g.run("fetch", "--quiet", s.CloneURL("demo"), "feature")
	g.run("checkout", "--quiet", "-b", "feature", "FETCH_HEAD")
	g.write("service.yaml", "replicas: 2\n")
	headSHA := g.commit("scale to 2")
	g.run("push", "--quiet", s.CloneURL("demo"), "feature")

	number := s.CreatePullRequest("demo", "feature", "main", "Scale to 2", "knit: canary 10,50", "canary")
	receiver.wait(t, "pull_request opened webhook", "pull_request", func(m map[string]any) bool {
		return m["action"] == "opened" && m["number"] == float64(number)
	})
	pr, err := s.PullRequest("demo", number)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Head.SHA != headSHA || pr.Head.Ref != "feature" || pr.Base.Ref != "main" || len(pr.Labels) != 1 || pr.Labels[0].Name != "canary" {
		t.Errorf("pull request %+v, want feature@%s into main labelled canary", pr, headSHA)
	}
	// A second pull request finds the label instead of creating it again.
	g.run("checkout", "--quiet", "-b", "other", "main")
	g.write("other.yaml", "x: 1\n")
	g.commit("other")
	g.run("push", "--quiet", s.CloneURL("demo"), "other")
	other := s.CreatePullRequest("demo", "other", "main", "Other", "", "canary")

	for _, st := range []map[string]string{
		{"state": "pending", "context": "knit/preview", "description": "deploying"},
		{"state": "success", "context": "knit/preview", "description": "ready", "target_url": "http://demo-pr-1.default.localhost:8080"},
	} {
		if err := s.API(http.MethodPost, "/repos/knit/demo/statuses/"+headSHA, st, nil); err != nil {
			t.Fatal(err)
		}
	}
	statuses, err := s.Statuses("demo", headSHA)
	if err != nil {
		t.Fatal(err)
	}
	if len(statuses) != 2 || statuses[0].State != "success" || statuses[0].Context != "knit/preview" ||
		statuses[0].TargetURL != "http://demo-pr-1.default.localhost:8080" || statuses[0].Description != "ready" ||
		statuses[1].State != "pending" {
		t.Errorf("statuses %+v, want success then pending for knit/preview", statuses)
	}

	var c Comment
	if err := s.API(http.MethodPost, fmt.Sprintf("/repos/knit/demo/issues/%d/comments", number), map[string]string{"body": "preview at …"}, &c); err != nil {
		t.Fatal(err)
	}
	// knit edits its one comment in place on each push.
	if err := s.API(http.MethodPatch, fmt.Sprintf("/repos/knit/demo/issues/comments/%d", c.ID), map[string]string{"body": "preview updated"}, nil); err != nil {
		t.Fatal(err)
	}
	comments, err := s.Comments("demo", number)
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 1 || comments[0].ID != c.ID || comments[0].Body != "preview updated" || comments[0].User.Login != "knit" {
		t.Errorf("comments %+v, want comment %d by knit, edited", comments, c.ID)
	}

	s.EditPullRequestBody("demo", number, "knit: canary 25")
	s.MergePullRequest("demo", number)
	if pr, err = s.PullRequest("demo", number); err != nil {
		t.Fatal(err)
	} else if !pr.Merged || pr.State != "closed" || pr.Body != "knit: canary 25" {
		t.Errorf("after edit and merge: pull request %+v, want merged, closed, body edited", pr)
	}
	receiver.wait(t, "pull_request closed (merged) webhook", "pull_request", func(m map[string]any) bool {
		p, _ := m["pull_request"].(map[string]any)
		return m["action"] == "closed" && m["number"] == float64(number) && p["merged"] == true
	})

	// A journey's steps are subtests; a step's failures are its own.
	t.Run("close", func(t *testing.T) {
		s.With(t).ClosePullRequest("demo", other)
		if pr, err := s.PullRequest("demo", other); err != nil {
			t.Fatal(err)
		} else if pr.Merged || pr.State != "closed" {
			t.Errorf("closed pull request %+v, want closed and not merged", pr)
		}
	})
}

// git is a work tree driven with the real git CLI, isolated from the
// machine's git configuration.
type git struct {
	t   *testing.T
	dir string
	env []string
}

func newGit(t *testing.T) *git {
	t.Helper()
	home := t.TempDir()
	g := &git{t: t, dir: t.TempDir()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			g.env = append(g.env, kv)
		}
	}
	g.env = append(g.env, "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada Lovelace", "GIT_COMMITTER_EMAIL=ada@example.com")
	g.run("init", "--quiet", "--initial-branch", "main")
	return g
}

func (g *git) run(args ...string) string {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = g.dir, g.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (g *git) write(name, content string) {
	g.t.Helper()
	if err := os.WriteFile(filepath.Join(g.dir, name), []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

// commit commits every change and returns the new commit's SHA.
func (g *git) commit(msg string) string {
	g.t.Helper()
	g.run("add", "--all")
	g.run("commit", "--quiet", "-m", msg)
	return g.run("rev-parse", "HEAD")
}
