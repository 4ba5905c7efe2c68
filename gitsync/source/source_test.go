package source

import (
	"context"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/knitops/knit/gitsync/egress"
)

// gitRepo makes a repository with the git CLI and returns a function that
// runs git in it.
func gitRepo(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com",
			"GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	return dir, run
}

// localDirs is the egress policy of tests that fetch from a local
// directory, which knit's default policy refuses.
func localDirs() *egress.Policy { return &egress.Policy{Schemes: []string{"file"}} }

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFetchCommitCheckout(t *testing.T) {
	dir, git := gitRepo(t)
	writeFile(t, dir, "cmd/hello/main.go", "package main\n")
	writeFile(t, dir, "service.yaml", "kind: Service\n")
	git("add", ".")
	git("commit", "-qm", "first")
	first := git("rev-parse", "HEAD")

	c := &Cache{Dir: t.TempDir(), Egress: localDirs}
	ctx := context.Background()
	got, err := c.Fetch(ctx, "default/hello", dir, []string{"main", "feature"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Heads["main"] != first || len(got.Missing) != 1 || got.Missing[0] != "feature" {
		t.Fatalf("fetch = %+v, want main at %s and feature missing", got, first)
	}
	commit, err := c.Commit("default/hello", first)
	if err != nil || commit.Message != "first\n" || commit.Author.Name != "Ada" {
		t.Fatalf("commit = %v, %v", commit, err)
	}

	git("checkout", "-qb", "feature")
	writeFile(t, dir, "service.yaml", "kind: Service # feature\n")
	git("commit", "-qam", "second")
	second := git("rev-parse", "HEAD")
	got, err = c.Fetch(ctx, "default/hello", dir, []string{"main", "feature"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Heads["main"] != first || got.Heads["feature"] != second || len(got.Missing) != 0 {
		t.Fatalf("second fetch = %+v", got)
	}

	// A third commit on main after shallow fetches: the next fetch still
	// brings exactly the new head.
	git("checkout", "-q", "main")
	writeFile(t, dir, "service.yaml", "kind: Service # third\n")
	git("commit", "-qam", "third")
	third := git("rev-parse", "HEAD")
	got, err = c.Fetch(ctx, "default/hello", dir, []string{"main", "feature"}, nil)
	if err != nil || got.Heads["main"] != third {
		t.Fatalf("third fetch = %+v, %v; want main at %s", got, err, third)
	}
	if _, err := c.Commit("default/hello", third); err != nil {
		t.Fatalf("the new head is not readable after a shallow fetch: %v", err)
	}

	root := t.TempDir()
	out, err := c.Checkout("default/hello", second, root)
	if err != nil {
		t.Fatal(err)
	}
	if out != filepath.Join(root, second) {
		t.Errorf("checkout dir = %s, want keyed by the SHA", out)
	}
	b, err := os.ReadFile(filepath.Join(out, "service.yaml"))
	if err != nil || string(b) != "kind: Service # feature\n" {
		t.Errorf("checked out service.yaml = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(out, "cmd/hello/main.go")); err != nil {
		t.Errorf("nested file missing: %v", err)
	}
	again, err := c.Checkout("default/hello", second, root)
	if err != nil || again != out {
		t.Errorf("second checkout = %s, %v; want the same directory reused", again, err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("checkout root holds %d entries, want only the SHA directory", len(entries))
	}
}

func TestFetchEmptyRemote(t *testing.T) {
	dir, _ := gitRepo(t)
	c := &Cache{Dir: t.TempDir(), Egress: localDirs}
	got, err := c.Fetch(context.Background(), "default/empty", dir, []string{"main"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Heads) != 0 || len(got.Missing) != 1 {
		t.Errorf("fetch of an empty repository = %+v, want main missing", got)
	}
}

// TestFetchOverHTTPWithAuth serves a repository through git's own
// http-backend behind basic auth, as a forge would.
func TestFetchOverHTTPWithAuth(t *testing.T) {
	dir, git := gitRepo(t)
	writeFile(t, dir, "a.txt", "a\n")
	git("add", ".")
	git("commit", "-qm", "a")
	head := git("rev-parse", "HEAD")
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + filepath.Dir(dir), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir,
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "git" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()
	url := srv.URL + "/" + filepath.Base(dir) + "/.git"

	// The server listens on loopback: allowed explicitly, as an operator would.
	allowed, err := egress.ParseRules(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := &Cache{Dir: t.TempDir(), Egress: func() *egress.Policy { return &egress.Policy{Allow: allowed} }}
	if _, err := c.Fetch(context.Background(), "default/private", url, []string{"main"}, nil); err == nil {
		t.Fatal("fetch without credentials succeeded")
	}
	auth := AuthFromSecret(map[string][]byte{SecretPassword: []byte("s3cret")})
	got, err := c.Fetch(context.Background(), "default/private", url, []string{"main"}, auth)
	if err != nil {
		t.Fatal(err)
	}
	if got.Heads["main"] != head {
		t.Errorf("head = %s, want %s", got.Heads["main"], head)
	}
}

func TestAuthFromSecret(t *testing.T) {
	tests := []struct {
		name string
		data map[string][]byte
		want any
	}{
		{"none", nil, nil},
		{"token", map[string][]byte{SecretBearerToken: []byte("t")}, &githttp.TokenAuth{Token: "t"}},
		{"basic", map[string][]byte{SecretUsername: []byte("u"), SecretPassword: []byte("p")}, &githttp.BasicAuth{Username: "u", Password: "p"}},
		{"forge token as password", map[string][]byte{SecretPassword: []byte("p")}, &githttp.BasicAuth{Username: "git", Password: "p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AuthFromSecret(tt.data)
			if tt.want == nil {
				if got != nil {
					t.Errorf("auth = %v, want none", got)
				}
				return
			}
			if got == nil || got.String() != tt.want.(interface{ String() string }).String() {
				t.Errorf("auth = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSafePath(t *testing.T) {
	for name, want := range map[string]bool{
		"a/b.go": true, "main.go": true, "../x": false, "a/../../x": false, "/etc/passwd": false, ".git/config": false, "": false,
	} {
		if got := safePath(name); got != want {
			t.Errorf("safePath(%q) = %v, want %v", name, got, want)
		}
	}
}

// A build's context is the directory it names and nothing else: no file
// of the rest of the repository, no link that could point out of it.
func TestExportWritesOnlyTheDirectory(t *testing.T) {
	dir, git := gitRepo(t)
	writeFile(t, dir, "web/Dockerfile", "FROM scratch\n")
	writeFile(t, dir, "web/app/main.py", "print('hi')\n")
	writeFile(t, dir, "secrets.txt", "elsewhere\n")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "web", "passwd")); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-qm", "first")
	sha := git("rev-parse", "HEAD")
	c := &Cache{Dir: t.TempDir(), Egress: localDirs}
	if _, err := c.Fetch(context.Background(), "default/web", dir, []string{"main"}, nil); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "ctx")
	if err := c.Export("default/web", sha, "web", dst); err != nil {
		t.Fatal(err)
	}
	var got []string
	_ = filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dst, p)
			got = append(got, rel)
		}
		return err
	})
	if want := []string{"Dockerfile", "app/main.py"}; !slices.Equal(got, want) {
		t.Errorf("exported %v, want %v", got, want)
	}
	for _, bad := range []string{"../web", "nowhere"} {
		if err := c.Export("default/web", sha, bad, filepath.Join(t.TempDir(), "x")); err == nil {
			t.Errorf("Export of %q succeeded", bad)
		}
	}
}
