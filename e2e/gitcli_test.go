//go:build !unit

package e2e

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The identity every commit of a journey carries, as Revision annotations
// and event data must repeat it.
const (
	gitAuthorName  = "Ada Lovelace"
	gitAuthorEmail = "ada@example.com"
)

// gitWorkTree is an app repository driven with the real git CLI, isolated
// from the machine's and user's git configuration.
type gitWorkTree struct {
	t   *testing.T
	dir string
	env []string
}

// newGitWorkTree copies src into a temporary directory and makes it a
// repository whose branch main holds one commit with message msg.
func newGitWorkTree(t *testing.T, src, msg string) *gitWorkTree {
	t.Helper()
	home := t.TempDir()
	g := &gitWorkTree{t: t, dir: filepath.Join(t.TempDir(), "app")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			g.env = append(g.env, kv)
		}
	}
	g.env = append(g.env, "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME="+gitAuthorName, "GIT_AUTHOR_EMAIL="+gitAuthorEmail,
		"GIT_COMMITTER_NAME="+gitAuthorName, "GIT_COMMITTER_EMAIL="+gitAuthorEmail)
	if err := copyTree(src, g.dir); err != nil {
		t.Fatal(err)
	}
	g.git("init", "--quiet", "--initial-branch", "main")
	g.commitAll(msg)
	return g
}

// git runs git in the work tree and returns its combined output; a
// failure fails the test.
func (g *gitWorkTree) git(args ...string) string {
	g.t.Helper()
	out, err := g.tryGit(args...)
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (g *gitWorkTree) tryGit(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = g.dir, g.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// commitAll commits every change in the work tree and returns the SHA.
func (g *gitWorkTree) commitAll(msg string) string {
	g.t.Helper()
	g.git("add", "--all")
	g.git("commit", "--quiet", "--allow-empty", "-m", msg)
	return g.head()
}

func (g *gitWorkTree) head() string {
	g.t.Helper()
	return strings.TrimSpace(g.git("rev-parse", "HEAD"))
}

func (g *gitWorkTree) read(name string) string {
	g.t.Helper()
	b, err := os.ReadFile(filepath.Join(g.dir, name))
	if err != nil {
		g.t.Fatal(err)
	}
	return string(b)
}

func (g *gitWorkTree) write(name, content string) {
	g.t.Helper()
	if err := os.WriteFile(filepath.Join(g.dir, name), []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

// replace swaps old for new in a file, failing if old is not there.
func (g *gitWorkTree) replace(name, old, new string) {
	g.t.Helper()
	s := g.read(name)
	if !strings.Contains(s, old) {
		g.t.Fatalf("%s does not contain %q:\n%s", name, old, s)
	}
	g.write(name, strings.Replace(s, old, new, 1))
}

// copyTree copies the regular files under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
