package gitserver

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// harness runs a Server behind an httptest server on 127.0.0.1 and a git
// client whose configuration is its own: HOME is a temp dir, no system or
// global config is read.
type harness struct {
	t      *testing.T
	home   string
	srv    *Server
	ts     *httptest.Server
	pushes chan Push

	mu        sync.Mutex
	encodings map[string]int // Content-Encoding of POST bodies, "" for none
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, home: t.TempDir(), pushes: make(chan Push, 100), encodings: map[string]int{}}
	if opts.Root == "" {
		opts.Root = filepath.Join(t.TempDir(), "repos")
	}
	if opts.OnPush == nil {
		opts.OnPush = func(_ context.Context, p Push) { h.pushes <- p }
	}
	if opts.Token == nil {
		opts.Token = StaticToken(testToken)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	h.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			h.mu.Lock()
			h.encodings[r.Header.Get("Content-Encoding")]++
			h.mu.Unlock()
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.ts.Close()
		srv.Close()
	})
	return h
}

// testToken is the harness servers' token.
const testToken = "s3cret-t0ken"

// url is where git pushes and fetches name, with the token as the
// password of any user.
func (h *harness) url(name string) string {
	return strings.Replace(h.ts.URL, "http://", "http://git:"+testToken+"@", 1) + "/git/" + name + ".git"
}

// run runs the git client in dir.
func (h *harness) run(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GIT_") && !strings.HasPrefix(e, "HOME=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env,
		"HOME="+h.home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+filepath.Join(h.home, ".gitconfig"),
		"GIT_TERMINAL_PROMPT=0",
	)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (h *harness) git(dir string, args ...string) string {
	h.t.Helper()
	out, err := h.run(dir, args...)
	if err != nil {
		h.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

// workRepo makes a working repository with its own user.name and email.
func (h *harness) workRepo() string {
	h.t.Helper()
	dir := h.t.TempDir()
	h.git(dir, "init", "-q", "--initial-branch=main")
	h.git(dir, "config", "user.name", "knit test")
	h.git(dir, "config", "user.email", "test@knit.invalid")
	return dir
}

// commit writes a file and commits it, returning the commit's SHA.
func (h *harness) commit(dir, file, content string) string {
	h.t.Helper()
	p := filepath.Join(dir, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.git(dir, "add", "-A")
	h.git(dir, "commit", "-q", "-m", "change "+file)
	return h.git(dir, "rev-parse", "HEAD")
}

func (h *harness) nextPush() Push {
	h.t.Helper()
	select {
	case p := <-h.pushes:
		return p
	case <-time.After(20 * time.Second):
		h.t.Fatal("no OnPush call")
		return Push{}
	}
}

func (h *harness) noPush(wait time.Duration) {
	h.t.Helper()
	select {
	case p := <-h.pushes:
		h.t.Fatalf("unexpected OnPush call: %+v", p)
	case <-time.After(wait):
	}
}

func TestPushFetchAndDelete(t *testing.T) {
	h := newHarness(t, Options{})
	work := h.workRepo()
	first := h.commit(work, "service.yaml", "kind: Service\n")
	h.git(work, "push", "-q", h.url("app"), "main")

	dir := filepath.Join(h.srv.opts.Root, "app.git")
	want := Push{Repo: "app", Dir: dir, Updates: []RefUpdate{{Ref: "refs/heads/main", Old: ZeroSHA, New: first}}}
	got := h.nextPush()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("first push (-want +got):\n%s", diff)
	}
	if !got.Updates[0].Created() || got.Updates[0].Deleted() {
		t.Errorf("first push: Created/Deleted = %t/%t", got.Updates[0].Created(), got.Updates[0].Deleted())
	}
	if head := h.git(dir, "symbolic-ref", "HEAD"); head != "refs/heads/main" {
		t.Errorf("new repository's HEAD = %s, want refs/heads/main", head)
	}

	second := h.commit(work, "service.yaml", "kind: Service\nspec: {}\n")
	h.git(work, "push", "-q", h.url("app"), "main")
	want.Updates = []RefUpdate{{Ref: "refs/heads/main", Old: first, New: second}}
	if diff := cmp.Diff(want, h.nextPush()); diff != "" {
		t.Fatalf("second push (-want +got):\n%s", diff)
	}

	// Clone, with and without .git in the URL.
	for _, url := range []string{h.url("app"), strings.TrimSuffix(h.url("app"), ".git")} {
		clone := filepath.Join(t.TempDir(), "clone")
		h.git("", "clone", "-q", url, clone)
		data, err := os.ReadFile(filepath.Join(clone, "service.yaml"))
		if err != nil || string(data) != "kind: Service\nspec: {}\n" {
			t.Errorf("clone of %s: service.yaml = %q, %v", url, data, err)
		}
		if sha := h.git(clone, "rev-parse", "HEAD"); sha != second {
			t.Errorf("clone of %s: HEAD = %s, want %s", url, sha, second)
		}
	}

	// A branch and a tag in one push, then the branch's deletion.
	h.git(work, "branch", "feature")
	h.git(work, "tag", "v1")
	h.git(work, "push", "-q", h.url("app"), "feature", "v1")
	want.Updates = []RefUpdate{
		{Ref: "refs/heads/feature", Old: ZeroSHA, New: second},
		{Ref: "refs/tags/v1", Old: ZeroSHA, New: second},
	}
	if diff := cmp.Diff(want, h.nextPush()); diff != "" {
		t.Fatalf("branch and tag push (-want +got):\n%s", diff)
	}
	h.git(work, "push", "-q", h.url("app"), "--delete", "feature")
	got = h.nextPush()
	want.Updates = []RefUpdate{{Ref: "refs/heads/feature", Old: second, New: ZeroSHA}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("deletion (-want +got):\n%s", diff)
	}
	if !got.Updates[0].Deleted() {
		t.Error("deletion: Deleted() = false")
	}

	// A push that changes nothing is not reported; a rejected one neither.
	h.git(work, "push", "-q", h.url("app"), "main")
	other := h.workRepo()
	h.commit(other, "x", "unrelated history")
	if out, err := h.run(other, "push", h.url("app"), "main"); err == nil {
		t.Fatalf("non-fast-forward push succeeded:\n%s", out)
	}
	h.noPush(300 * time.Millisecond)
}

func TestRequestsRefused(t *testing.T) {
	h := newHarness(t, Options{})
	work := h.workRepo()
	h.commit(work, "a", "a")
	h.git(work, "push", "-q", h.url("app"), "main")
	h.nextPush()

	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/git/App.git/info/refs?service=git-upload-pack", 400, "invalid repository name"},
		{"GET", "/git/a_b/info/refs?service=git-receive-pack", 400, "invalid repository name"},
		{"GET", "/git/-a.git/info/refs?service=git-receive-pack", 400, "invalid repository name"},
		{"GET", "/git/a.b.git/info/refs?service=git-receive-pack", 400, "invalid repository name"},
		{"GET", "/git/..git/info/refs?service=git-receive-pack", 400, "invalid repository name"},
		{"GET", "/git/../info/refs?service=git-receive-pack", 400, "invalid repository name"},
		{"GET", "/git/%2e%2e/info/refs?service=git-receive-pack", 400, "invalid repository name"},
		{"GET", "/git/a%2Fb/info/refs?service=git-receive-pack", 404, "not a Git smart HTTP endpoint"},
		{"GET", "/git/" + strings.Repeat("a", 64) + "/info/refs?service=git-receive-pack", 400, "at most 63"},
		{"GET", "/git/nope.git/info/refs?service=git-upload-pack", 404, `repository "nope" does not exist`},
		{"POST", "/git/nope.git/git-upload-pack", 404, `repository "nope" does not exist`},
		// A push creates its repository, and removes it when it stored nothing.
		{"POST", "/git/nope.git/git-receive-pack", 415, "Content-Type"},
		{"GET", "/git/app.git/info/refs", 400, "smart HTTP"},
		{"GET", "/git/app.git/HEAD", 404, "not a Git smart HTTP endpoint"},
		{"GET", "/git/app.git/objects/info/packs", 404, "not a Git smart HTTP endpoint"},
		{"GET", "/git/app.git/git-upload-pack", 405, "needs POST"},
		{"POST", "/git/app.git/info/refs?service=git-upload-pack", 405, "needs GET"},
		{"GET", "/other/app.git/info/refs?service=git-upload-pack", 404, "not found"},
	} {
		if code, _, body := h.do(tc.method, tc.path, "", testToken); code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("%s %s = %d %q, want %d containing %q", tc.method, tc.path, code, body, tc.code, tc.body)
		}
	}
	entries, err := os.ReadDir(h.srv.opts.Root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "app.git" {
		t.Errorf("repositories after refused requests: %v, want only app.git", entries)
	}

	// The git CLI says what went wrong.
	out, err := h.run("", "clone", h.url("nope"), filepath.Join(t.TempDir(), "c"))
	if err == nil || !strings.Contains(out, "404") && !strings.Contains(out, "not found") {
		t.Errorf("clone of a missing repository: %v\n%s", err, out)
	}
	out, err = h.run(work, "push", h.url("Bad_Name"), "main")
	if err == nil || !strings.Contains(out, "400") {
		t.Errorf("push to a bad name: %v\n%s", err, out)
	}
}

func TestConcurrentPushes(t *testing.T) {
	h := newHarness(t, Options{})
	type pushed struct{ repo, ref, sha string }
	var jobs []pushed
	works := map[pushed]string{}
	for _, repo := range []string{"one", "two"} {
		for _, branch := range []string{"main", "canary"} {
			work := h.workRepo()
			if branch != "main" {
				h.git(work, "checkout", "-q", "-b", branch)
			}
			sha := h.commit(work, "f", repo+branch)
			j := pushed{repo, "refs/heads/" + branch, sha}
			jobs = append(jobs, j)
			works[j] = work
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs))
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := h.run(works[j], "push", "-q", h.url(j.repo), "HEAD:"+j.ref); err != nil {
				errs <- fmt.Errorf("push %s %s: %v\n%s", j.repo, j.ref, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := map[pushed]bool{}
	for range jobs {
		p := h.nextPush()
		for _, u := range p.Updates {
			if u.Old != ZeroSHA {
				t.Errorf("%s %s: old = %s, want zero", p.Repo, u.Ref, u.Old)
			}
			got[pushed{p.Repo, u.Ref, u.New}] = true
		}
	}
	for _, j := range jobs {
		if !got[j] {
			t.Errorf("push %+v not reported; got %v", j, got)
		}
	}
}

// randomFile writes n incompressible bytes.
func randomFile(t *testing.T, path string, n int) {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLargePushIsChunked(t *testing.T) {
	h := newHarness(t, Options{})
	work := h.workRepo()
	randomFile(t, filepath.Join(work, "blob.bin"), 3<<20) // over git's 1 MiB http.postBuffer
	h.git(work, "add", "-A")
	h.git(work, "commit", "-q", "-m", "big")
	sha := h.git(work, "rev-parse", "HEAD")
	h.git(work, "push", "-q", h.url("big"), "main")
	if p := h.nextPush(); p.Updates[0].New != sha {
		t.Fatalf("push = %+v, want main at %s", p, sha)
	}
}

// A push over MaxPushBytes is refused in git's words, whether its body
// has a length (small pushes) or is chunked (over git's 1 MiB
// http.postBuffer), and however far past the limit it goes: git shows
// the limit and how to raise it, every ref rejected, and nothing is
// stored (no ref moved, no object added, a first push leaves no
// repository).
func TestPushTooLarge(t *testing.T) {
	const limit = 256 << 10
	h := newHarness(t, Options{MaxPushBytes: limit, LimitHint: "raise the limit with knit dev --git-max-push-size"})
	work := h.workRepo()
	h.commit(work, "small", "small")
	h.git(work, "push", "-q", h.url("app"), "main")
	h.nextPush()
	repo := filepath.Join(h.srv.opts.Root, "app.git")
	before, objects := h.git(repo, "rev-parse", "main"), h.git(repo, "count-objects", "-v")

	for _, size := range []int{512 << 10, 3 << 20, 40 << 20} { // with Content-Length, chunked, far past the limit
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			randomFile(t, filepath.Join(work, "blob.bin"), size)
			h.git(work, "add", "-A")
			h.git(work, "commit", "-q", "-m", fmt.Sprintf("big %d", size))
			h.git(work, "branch", "-f", "feature")
			out, err := h.run(work, "push", h.url("app"), "main", "feature")
			if err == nil {
				t.Fatalf("push of %d bytes over a %d-byte limit succeeded:\n%s", size, limit, out)
			}
			t.Logf("push of %d bytes refused:\n%s", size, out)
			for _, want := range []string{
				"remote: push refused: it is over this Git server's limit of 256 KiB",
				"raise the limit with knit dev --git-max-push-size",
				"[remote rejected] main -> main (push over the 256 KiB limit)",
				"[remote rejected] feature -> feature (push over the 256 KiB limit)",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("git push does not say %q", want)
				}
			}
			if after := h.git(repo, "rev-parse", "main"); after != before {
				t.Errorf("refused push of %d bytes moved main from %s to %s", size, before, after)
			}
			if got := h.git(repo, "count-objects", "-v"); got != objects {
				t.Errorf("refused push of %d bytes stored objects:\nbefore %s\nafter  %s", size, objects, got)
			}
		})
	}
	h.noPush(300 * time.Millisecond)

	out, err := h.run(work, "push", h.url("new"), "main")
	if err == nil || !strings.Contains(out, "limit of 256 KiB") {
		t.Errorf("first push of a too-large repository: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(h.srv.opts.Root, "new.git")); !os.IsNotExist(err) {
		t.Errorf("a refused first push left a repository behind: %v", err)
	}
}

func TestGzipRequestBodies(t *testing.T) {
	h := newHarness(t, Options{})
	work := h.workRepo()
	h.commit(work, "a", "a")
	// Enough refs that a fetch's request is over 1 KiB: git gzips those.
	for i := range 60 {
		h.git(work, "branch", fmt.Sprintf("branch-with-a-longish-name-%02d", i))
	}
	h.git(work, "push", "-q", h.url("many"), "refs/heads/*:refs/heads/*")
	if p := h.nextPush(); len(p.Updates) != 61 {
		t.Fatalf("push of 61 branches reported %d updates", len(p.Updates))
	}
	clone := filepath.Join(t.TempDir(), "clone")
	h.git("", "clone", "-q", "--mirror", h.url("many"), clone)
	if n := len(strings.Fields(h.git(clone, "for-each-ref", "--format=%(refname)"))); n != 61 {
		t.Errorf("mirror clone has %d refs, want 61", n)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t.Logf("Content-Encodings of POST bodies: %v", h.encodings)
	if h.encodings["gzip"] == 0 {
		t.Errorf("no gzip request body seen (Content-Encodings of POSTs: %v); the decoding path went untested", h.encodings)
	}
}

func TestOnPushDoesNotDelayThePush(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	called := make(chan Push, 1)
	h := newHarness(t, Options{OnPush: func(ctx context.Context, p Push) {
		called <- p
		select {
		case <-release:
		case <-ctx.Done():
		}
	}})
	work := h.workRepo()
	h.commit(work, "a", "a")
	h.git(work, "push", "-q", h.url("app"), "main") // returns while OnPush blocks
	select {
	case <-called:
	case <-time.After(20 * time.Second):
		t.Fatal("OnPush not called")
	}
}

func TestWaitForOnPush(t *testing.T) {
	release := make(chan struct{})
	called := make(chan struct{})
	h := newHarness(t, Options{WaitForOnPush: true, OnPush: func(context.Context, Push) {
		close(called)
		<-release
	}})
	work := h.workRepo()
	h.commit(work, "a", "a")
	done := make(chan error, 1)
	go func() {
		_, err := h.run(work, "push", "-q", h.url("app"), "main")
		done <- err
	}()
	select {
	case <-called:
	case <-time.After(20 * time.Second):
		t.Fatal("OnPush not called")
	}
	select {
	case err := <-done:
		t.Fatalf("push returned (%v) before OnPush did", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("push: %v", err)
	}
}

func TestClose(t *testing.T) {
	ctxs := make(chan context.Context, 1)
	h := newHarness(t, Options{OnPush: func(ctx context.Context, _ Push) {
		ctxs <- ctx
		<-ctx.Done()
	}})
	work := h.workRepo()
	h.commit(work, "a", "a")
	h.git(work, "push", "-q", h.url("app"), "main")
	ctx := <-ctxs
	if err := h.srv.Close(); err != nil { // returns once OnPush saw the cancellation
		t.Fatal(err)
	}
	if ctx.Err() == nil {
		t.Error("OnPush's context not cancelled by Close")
	}
	resp, err := http.Get(h.url("app") + "/info/refs?service=git-upload-pack")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("request after Close = %d, want 503", resp.StatusCode)
	}
}
