package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/internal/baseimages"
	"github.com/knitops/knit/internal/knitbuild"
	"github.com/knitops/knit/internal/testregistry"
)

// The dockerfile:// subject: examples/python-hello, a Dockerfile beside
// its code, pushed to knit dev's Git server; its base comes from a
// loopback registry mirroring docker.io.
const (
	pyApp      = "examples/python-hello"
	pyRepo     = "python-hello" // the repository, its GitRepository and its Service
	pyHost     = "python-hello.default.localhost"
	pyBase     = "python"
	pyBaseRef  = "library/python:3.11-slim"
	pyFile     = "app.py"
	pyGreeting = "from Python!"
	pyBody     = "Hello GitOps from Python!\n"
	// dockerfileTimeout bounds each wait of the part: a push until its
	// answer, a build's record in status.builds.
	dockerfileTimeout = 3 * time.Minute
)

// dockerfileRun is one push of a commit until its answer through the
// ingress, with what status.builds says of its build.
type dockerfileRun struct {
	// total is git push's start → the new answer's first byte.
	total time.Duration
	// build is knit dev's whole build (context export, BuildKit's
	// steps, the push to its registry); push is BuildKit's export and
	// push of the image, part of build.
	build, push time.Duration
}

// rollout is what follows the build: fetch, render and apply before it,
// the new Revision's start and the Route's switch after.
func (r dockerfileRun) rollout() time.Duration { return r.total - r.build }

// dockerfileResult is the dockerfile:// part of the report.
type dockerfileResult struct {
	// skipped says why the part did not run; "" when it did.
	skipped   string
	knitBuild time.Duration
	devStart  time.Duration
	basePush  time.Duration // the python base onto the mirror
	cold      dockerfileRun // the first push: empty BuildKit cache, buildkitd started
	warm      []dockerfileRun
}

// dockerfileSkipReason says why this machine cannot run the part.
func dockerfileSkipReason() string {
	if os.Geteuid() != 0 {
		return "knit dev builds dockerfile:// images only as root (BuildKit's worker runs steps with runc)"
	}
	if _, err := baseimages.Dir(pyBase); err != nil {
		return err.Error()
	}
	return ""
}

// measureDockerfile runs knit dev built from this tree with a loopback
// mirror of docker.io holding the python base, pushes examples/python-hello
// to its Git server and times push → serving: the first, cold build,
// then runs code changes of app.py with BuildKit's cache warm.
func measureDockerfile(ctx context.Context, root, binDir string, runs int, progress io.Writer) (*dockerfileResult, error) {
	res := &dockerfileResult{}
	if res.skipped = dockerfileSkipReason(); res.skipped != "" {
		fmt.Fprintf(progress, "dockerfile: skipped: %s\n", res.skipped)
		return res, nil
	}
	if err := checkTools(binDir); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "knit-bench-dockerfile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	mirror, stopMirror, err := testregistry.Serve(false)
	if err != nil {
		return nil, err
	}
	defer stopMirror()
	began := time.Now()
	if err := pushBase(ctx, mirror); err != nil {
		return nil, err
	}
	res.basePush = time.Since(began)

	began = time.Now()
	knit, err := knitbuild.Build(ctx, root, tmp)
	if err != nil {
		return nil, err
	}
	res.knitBuild = time.Since(began)
	began = time.Now()
	d, err := startDev(ctx, knit, root, binDir, tmp, false, "--build-mirror", "docker.io="+mirror)
	if err != nil {
		return nil, err
	}
	defer d.stop()
	res.devStart = time.Since(began)
	fmt.Fprintf(progress, "dockerfile: base pushed to %s in %s, knit dev up in %s\n", mirror, res.basePush.Round(time.Millisecond), res.devStart.Round(time.Millisecond))

	c, err := d.client()
	if err != nil {
		return nil, err
	}
	token, err := os.ReadFile(filepath.Join(d.stateDir, "git-token"))
	if err != nil {
		return nil, fmt.Errorf("knit dev's git token: %w", err)
	}
	remote := fmt.Sprintf("http://knit:%s@%s/git/%s.git", strings.TrimSpace(string(token)), d.gitAddr, pyRepo)
	repo, app, err := newPythonRepo(ctx, root, tmp, remote)
	if err != nil {
		return nil, err
	}
	sha, err := commitAll(ctx, repo, "Hello")
	if err != nil {
		return nil, err
	}
	if res.cold, err = pushAndTime(ctx, d, c, repo, sha, pyBody); err != nil {
		return nil, d.explain(fmt.Errorf("first push (cold build): %w", err))
	}
	fmt.Fprintf(progress, "dockerfile: first push (cold build) → serving in %s\n", res.cold)

	for i := range runs {
		greeting := fmt.Sprintf("from Python, change %d!", i+1)
		if err := writeFile(filepath.Join(repo.dir, pyFile), strings.Replace(app, pyGreeting, greeting, 1)); err != nil {
			return nil, err
		}
		if sha, err = commitAll(ctx, repo, fmt.Sprintf("Change %d", i+1)); err != nil {
			return nil, err
		}
		run, err := pushAndTime(ctx, d, c, repo, sha, "Hello GitOps "+greeting+"\n")
		if err != nil {
			return nil, d.explain(fmt.Errorf("code change %d: %w", i+1, err))
		}
		fmt.Fprintf(progress, "dockerfile: code change %d/%d (warm) → serving in %s\n", i+1, runs, run)
		res.warm = append(res.warm, run)
	}
	return res, nil
}

func (r dockerfileRun) String() string {
	return fmt.Sprintf("%s (build %s, of it push %s; rollout %s)", fmtSec(r.total), fmtSec(r.build), fmtSec(r.push), fmtSec(r.rollout()))
}

// pushBase pushes the python base make base-images built to the mirror
// under docker.io's name; opts are the mirror's reference options
// (name.Insecure for a registry on plain HTTP beyond loopback).
func pushBase(ctx context.Context, mirror string, opts ...name.Option) error {
	dir, err := baseimages.Dir(pyBase)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := baseimages.Push(ctx, dir, mirror+"/"+pyBaseRef, opts...); err != nil {
		return fmt.Errorf("push the %s base: %w", pyBase, err)
	}
	return nil
}

// newPythonRepo copies examples/python-hello into a new work tree under
// tmp whose remote is remote (a Git server's URL with its token); app is
// app.py as it is.
func newPythonRepo(ctx context.Context, root, tmp, remote string) (*fleetRepo, string, error) {
	r := &fleetRepo{dir: filepath.Join(tmp, pyRepo), remote: remote}
	home := filepath.Join(tmp, "git-home")
	r.env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=knit bench", "GIT_AUTHOR_EMAIL=bench@knit.invalid",
		"GIT_COMMITTER_NAME=knit bench", "GIT_COMMITTER_EMAIL=bench@knit.invalid")
	src := filepath.Join(root, pyApp)
	entries, err := os.ReadDir(src)
	if err != nil {
		return nil, "", err
	}
	var app string
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return nil, "", err
		}
		if e.Name() == pyFile {
			app = string(data)
		}
		if err := writeFile(filepath.Join(r.dir, e.Name()), string(data)); err != nil {
			return nil, "", err
		}
	}
	if !strings.Contains(app, pyGreeting) {
		return nil, "", fmt.Errorf("%s/%s does not say %q any more: the bench cannot change it", pyApp, pyFile, pyGreeting)
	}
	if err := r.git(ctx, "init", "--quiet", "--initial-branch", "main"); err != nil {
		return nil, "", err
	}
	return r, app, nil
}

// commitAll commits every change of the work tree and returns the commit.
func commitAll(ctx context.Context, r *fleetRepo, msg string) (string, error) {
	if err := r.git(ctx, "add", "-A"); err != nil {
		return "", err
	}
	if err := r.git(ctx, "commit", "--quiet", "-m", msg); err != nil {
		return "", err
	}
	out, err := r.output(ctx, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

// pushAndTime pushes commit sha and times it until the ingress answers
// want for the app, then reads its build's durations from status.builds.
func pushAndTime(ctx context.Context, d *knitDev, c client.Client, repo *fleetRepo, sha, want string) (dockerfileRun, error) {
	var run dockerfileRun
	began := time.Now()
	if err := repo.push(ctx); err != nil {
		return run, err
	}
	if err := waitBodyFrom(ctx, d.httpAddr, pyHost, want, dockerfileTimeout); err != nil {
		return run, err
	}
	run.total = time.Since(began)
	st, err := succeededBuild(ctx, c, client.ObjectKey{Namespace: repoNamespace, Name: pyRepo}, sha)
	if err != nil {
		return run, err
	}
	if run.build, run.push, err = parseBuildDurations(st.Durations); err != nil {
		return run, fmt.Errorf("status.builds of %.7s: %w", sha, err)
	}
	return run, nil
}

// succeededBuild waits for the succeeded build of commit sha, with its
// durations, in the status.builds of the GitRepository key.
func succeededBuild(ctx context.Context, c client.Client, key client.ObjectKey, sha string) (knitv1alpha1.BuildStatus, error) {
	deadline := time.Now().Add(dockerfileTimeout)
	last := "nothing read yet"
	for time.Now().Before(deadline) {
		repo := &knitv1alpha1.GitRepository{}
		if err := c.Get(ctx, key, repo); err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("no build of %.7s among %d", sha, len(repo.Status.Builds))
			for _, b := range repo.Status.Builds {
				if b.Commit != sha {
					continue
				}
				if b.Phase == knitv1alpha1.BuildSucceeded && b.Durations != "" {
					return b, nil
				}
				last = fmt.Sprintf("build of %.7s: phase %s, durations %q", sha, b.Phase, b.Durations)
			}
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return knitv1alpha1.BuildStatus{}, err
		}
	}
	return knitv1alpha1.BuildStatus{}, fmt.Errorf("no succeeded build of %.7s in status.builds within %s: %s", sha, dockerfileTimeout, last)
}

// parseBuildDurations reads status.builds' durations of a dockerfile://
// build, "build=0.7s push=0.1s": build is required, push may be missing
// (0), other words are ignored.
func parseBuildDurations(s string) (build, push time.Duration, err error) {
	seen := false
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || (k != "build" && k != "push") {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, 0, fmt.Errorf("durations %q: %s=%q is not a duration", s, k, v)
		}
		if k == "build" {
			build, seen = d, true
		} else {
			push = d
		}
	}
	if !seen {
		return 0, 0, fmt.Errorf("durations %q: no build=", s)
	}
	return build, push, nil
}
