package main

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// repo makes a Git repository holding a Go module whose ./cmd/hello
// prints greeting (or does not compile when greeting is ""), and returns
// its path and head.
func repo(t *testing.T, greeting string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	main := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"" + greeting + "\") }\n"
	if greeting == "" {
		main = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Printn(\"typo\") }\n"
	}
	files := map[string]string{"go.mod": "module example.com/shop\n\ngo 1.22\n", "cmd/hello/main.go": main}
	for f, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com",
			"GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-qm", "hello")
	return dir, git("rev-parse", "HEAD")
}

// newRegistry is a real OCI registry on loopback.
func newRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func testOptions(t *testing.T, source, commit, reg string) options {
	t.Helper()
	t.Setenv("GOFLAGS", "-mod=mod")
	return options{
		source: source, commit: commit, pkg: "./cmd/hello", image: reg + "/default/shop/hello", tag: "k1",
		platform: "linux/amd64", insecure: true, workspace: t.TempDir(), terminationLog: "-", goCmd: "go",
	}
}

func TestBuildPushesTheCommitsBinary(t *testing.T) {
	src, sha := repo(t, "hello from the commit")
	reg := newRegistry(t)
	o := testOptions(t, src, sha, reg)
	var log strings.Builder
	res := build(context.Background(), o, &log)
	if res.Error != "" {
		t.Fatalf("build failed: %s\n%s", res.Error, log.String())
	}
	if !strings.HasPrefix(res.Image, reg+"/default/shop/hello@sha256:") || res.Reused {
		t.Fatalf("result = %+v, want a new image by digest in %s", res, reg)
	}
	ref, err := name.ParseReference(res.Image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Config.Entrypoint, " "); got != "/ko-app/hello" {
		t.Errorf("entrypoint = %q, want /ko-app/hello", got)
	}

	// Another registry, another workspace: the same digest (reproducible).
	other := testOptions(t, src, sha, newRegistry(t))
	res3 := build(context.Background(), other, &log)
	if digest(res3.Image) != digest(res.Image) {
		t.Errorf("rebuilding the same tree gave %s, want %s", digest(res3.Image), digest(res.Image))
	}
}

func TestBuildFailureQuotesTheCompiler(t *testing.T) {
	src, sha := repo(t, "")
	o := testOptions(t, src, sha, newRegistry(t))
	var log strings.Builder
	res := build(context.Background(), o, &log)
	if res.Image != "" || !strings.Contains(res.Error, "cmd/hello/main.go:5:") || !strings.Contains(res.Error, "Printn") {
		t.Fatalf("result = %+v, want the compiler's error about Printn\n%s", res, log.String())
	}
	if strings.Contains(res.Error, "# example.com") {
		t.Errorf("the error keeps go's package header: %q", res.Error)
	}
}

func TestBuildUnknownCommit(t *testing.T) {
	src, _ := repo(t, "x")
	o := testOptions(t, src, strings.Repeat("ab", 20), newRegistry(t))
	var log strings.Builder
	res := build(context.Background(), o, &log)
	if !strings.Contains(res.Error, "git checkout") {
		t.Fatalf("result = %+v, want a checkout error", res)
	}
}

func TestWriteResultFitsTheKubeletsLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "termination-log")
	if err := writeResult(path, result{Error: strings.Repeat("x", 10000), Fetch: "1s"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxMessage || !strings.Contains(string(b), `"fetch":"1s"`) {
		t.Errorf("result is %d bytes (limit %d): %.100s", len(b), maxMessage, b)
	}
}

func digest(image string) string { _, d, _ := strings.Cut(image, "@"); return d }
