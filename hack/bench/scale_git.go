package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// The repository the scale part pushes: examples/gitops-hello's app and
// a kustomization of many Services that all run it.
const (
	repoName      = "fleet"
	repoNamespace = "default" // a pushed repository deploys into knit dev's default namespace
	repoApp       = "examples/gitops-hello"
)

// fleetRepo is a Git work tree of the scale part's repository.
type fleetRepo struct {
	dir    string
	env    []string
	remote string
	fleet  fleet
}

// newFleetRepo writes the app and its Services into a new work tree under
// tmp, with one commit on main.
func newFleetRepo(ctx context.Context, root, tmp, gitAddr, token string, f fleet) (*fleetRepo, error) {
	r := &fleetRepo{dir: filepath.Join(tmp, repoName), fleet: f,
		remote: fmt.Sprintf("http://knit:%s@%s/git/%s.git", token, gitAddr, repoName)}
	home := filepath.Join(tmp, "git-home")
	r.env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=knit bench", "GIT_AUTHOR_EMAIL=bench@knit.invalid",
		"GIT_COMMITTER_NAME=knit bench", "GIT_COMMITTER_EMAIL=bench@knit.invalid")
	for _, name := range []string{"go.mod", "cmd/hello/main.go"} {
		data, err := os.ReadFile(filepath.Join(root, repoApp, name))
		if err != nil {
			return nil, err
		}
		if err := writeFile(filepath.Join(r.dir, name), string(data)); err != nil {
			return nil, err
		}
	}
	if err := writeFile(filepath.Join(r.dir, "kustomization.yaml"), "resources:\n  - services.yaml\n"); err != nil {
		return nil, err
	}
	if err := r.git(ctx, "init", "--quiet", "--initial-branch", "main"); err != nil {
		return nil, err
	}
	if _, err := r.commit(ctx, "Hello"); err != nil {
		return nil, err
	}
	return r, nil
}

// commit writes the Services answering target and commits them; it
// returns the new commit.
func (r *fleetRepo) commit(ctx context.Context, target string) (string, error) {
	if err := writeFile(filepath.Join(r.dir, "services.yaml"), r.fleet.manifests(target)); err != nil {
		return "", err
	}
	if err := r.git(ctx, "add", "-A"); err != nil {
		return "", err
	}
	if err := r.git(ctx, "commit", "--quiet", "-m", "Services answer "+target); err != nil {
		return "", err
	}
	out, err := r.output(ctx, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

func (r *fleetRepo) push(ctx context.Context) error {
	return r.git(ctx, "push", "--quiet", r.remote, "main")
}

// serves reports whether a Service of the repository is Ready with the
// Revision knit makes of commit sha (<service>-<sha7>).
func serves(sha string) func(*servingv1.Service) bool {
	return func(s *servingv1.Service) bool {
		return readyAt(s) && s.Status.LatestReadyRevisionName == s.Name+"-"+sha[:7]
	}
}

func (r *fleetRepo) git(ctx context.Context, args ...string) error {
	_, err := r.output(ctx, args...)
	return err
}

func (r *fleetRepo) output(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
