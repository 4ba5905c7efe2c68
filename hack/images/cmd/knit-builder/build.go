package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/knitops/knit/hack/images/pack"
)

// errorLines is how many lines of a failed step the result quotes; the
// Job's log has all of them.
const errorLines = 12

// build runs o.step (all of them when it is empty) and says how it went;
// its log goes to out. In a build Job each step is a container of its
// own (gitsync/build's Job): fetch holds the Git credentials, compile
// runs go build of the user's tree with no credentials at all, push holds
// the registry's and only reads the binary compile left in the
// workspace.
func build(ctx context.Context, o options, out io.Writer) result {
	var res result
	if err := o.validate(); err != nil {
		res.Error = err.Error()
		return res
	}
	src := filepath.Join(o.workspace, "src")
	bin := filepath.Join(o.workspace, binName)
	steps := []struct {
		name string
		took *string
		run  func() error
	}{
		{stepCache, nil, func() error { return os.MkdirAll(o.cacheDir, 0o775) }},
		{stepFetch, &res.Fetch, func() error { return fetch(ctx, o, src, out) }},
		{stepCompile, &res.Compile, func() error { return compile(ctx, o, src, bin, out) }},
		{stepDockerfile, &res.Build, func() error { return dockerfileBuild(ctx, o, src, out) }},
		{stepPush, &res.Push, func() (err error) { res.Image, err = pushStep(ctx, o, out); return err }},
	}
	for _, s := range steps {
		if !o.runs(s.name) {
			continue
		}
		began := time.Now()
		err := s.run()
		if s.took != nil {
			*s.took = seconds(time.Since(began))
		}
		if err != nil {
			res.Image, res.Error = "", err.Error()
			return res
		}
	}
	return res
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s" }

// fetch checks out exactly the commit into dir: a shallow fetch of the
// SHA, which Git servers allow for reachable commits (protocol v2), else
// a full fetch.
func fetch(ctx context.Context, o options, dir string, out io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	git := func(args ...string) error { return run(ctx, out, dir, gitEnv(), "git", args...) }
	logf(out, "fetching %s from %s", o.commit, o.source)
	if err := git("init", "-q"); err != nil {
		return fmt.Errorf("git init: %w", err)
	}
	// "--" ends git's options: the URL is the repository's, not a flag
	// (--upload-pack=… would run a command).
	if err := git("-c", "protocol.version=2", "fetch", "-q", "--depth=1", "--", o.source, o.commit); err != nil {
		logf(out, "a shallow fetch of the commit failed; fetching every branch")
		if err := git("fetch", "-q", "--", o.source, "+refs/heads/*:refs/remotes/origin/*"); err != nil {
			return fmt.Errorf("git fetch %s: %w", o.source, err)
		}
	}
	if err := git("-c", "advice.detachedHead=false", "checkout", "-q", "--detach", o.commit, "--"); err != nil {
		return fmt.Errorf("git checkout %s: %w", o.commit, err)
	}
	if o.dockerfileBuild() {
		// A Dockerfile's context is the tree alone, as knit dev exports
		// it: a COPY . never sees the repository's history.
		if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
			return fmt.Errorf("drop .git from the checkout: %w", err)
		}
	}
	return nil
}

// gitEnv passes the repository's credentials to git as an extra HTTP
// header through its environment (GIT_CONFIG_*), so they appear in no
// command line, the way knit's controller authenticates its fetches; an
// SSH repository's deploy key stays in the environment, which git hands
// to its SSH client.
func gitEnv() []string {
	env := []string{"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1"}
	header := ""
	if t := os.Getenv("GIT_BEARERTOKEN"); t != "" {
		header = "Authorization: Bearer " + t
	} else if user, pass := os.Getenv("GIT_USERNAME"), os.Getenv("GIT_PASSWORD"); user != "" || pass != "" {
		if user == "" {
			user = "git"
		}
		header = "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	if header != "" {
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0="+header)
	}
	if os.Getenv(envSSHIdentity) != "" {
		// git runs this very binary as its SSH client (sshCommand),
		// which reads the key from the environment git passes on. GIT_SSH,
		// not GIT_SSH_COMMAND: git runs the latter with sh, and the
		// toolchain image has no shell.
		if self, err := os.Executable(); err == nil {
			env = append(env, "GIT_SSH="+self, "GIT_SSH_VARIANT=ssh", envSSHClient+"=1")
		}
	}
	return env
}

// envSSHClient, set in git's environment only, makes knit-builder git's
// SSH client when git runs it.
const envSSHClient = "KNIT_BUILDER_SSH_CLIENT"

// compile builds the package for the platform: static, with no path or
// VCS stamp in the binary.
func compile(ctx context.Context, o options, src, bin string, out io.Writer) error {
	goos, goarch, _ := o.goosArch()
	logf(out, "go build %s for %s", o.pkg, o.platform)
	var output bytes.Buffer
	env := []string{"GOOS=" + goos, "GOARCH=" + goarch, "CGO_ENABLED=0", "GOTOOLCHAIN=local"}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	err := run(ctx, io.MultiWriter(out, &output), src, env, o.goCmd, compileArgs(bin, o.pkg)...)
	if err != nil {
		lines := firstErrorLines(output.String())
		if len(lines) == 0 {
			lines = []string{err.Error()}
		}
		return errors.New(strings.Join(lines, "\n"))
	}
	return nil
}

// compileArgs is go build's command line. pkg was checked (checkPackage)
// and "--" ends go's flags besides: whatever the package path says, go
// reads it as a package, never as a flag such as -toolexec.
func compileArgs(bin, pkg string) []string {
	return []string{"build", "-trimpath", "-buildvcs=false", "-o", bin, "--", pkg}
}

// firstErrorLines picks what says why a build failed out of go's output,
// skipping download notices and the "# package" headers.
func firstErrorLines(output string) []string {
	var lines []string
	for line := range strings.SplitSeq(output, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" || strings.HasPrefix(line, "go: downloading") || strings.HasPrefix(line, "# ") {
			continue
		}
		if lines = append(lines, line); len(lines) == errorLines {
			break
		}
	}
	return lines
}

// pushStep pushes what the build step left: a Dockerfile build's image
// layout, or the compiled binary packed onto an empty base.
func pushStep(ctx context.Context, o options, out io.Writer) (string, error) {
	if o.dockerfileBuild() {
		return pushLayout(ctx, o, out)
	}
	return push(ctx, o, out)
}

// push packs the binary and pushes it as <image>:<tag>, returning the
// image by digest. The tag is for people; knit trusts the digest it
// records, not the tag, which anything with push rights may move.
func push(ctx context.Context, o options, out io.Writer) (string, error) {
	tag, err := name.NewTag(o.image+":"+o.tag, o.nameOptions()...)
	if err != nil {
		return "", fmt.Errorf("image %s:%s: %w", o.image, o.tag, err)
	}
	private, err := copyBinary(o.workspace, filepath.Join(os.TempDir(), "knit-builder-app"))
	if err != nil {
		return "", err
	}
	defer os.Remove(private)
	_, goarch, _ := o.goosArch()
	dest := "/ko-app/" + o.program()
	img, err := pack.Image(pack.Spec{
		Files:      []pack.File{{Src: private, Dest: dest}},
		Entrypoint: []string{dest},
		Env:        []string{"KO_DATA_PATH=/var/run/ko"},
		CABundle:   o.caBundle,
		Arch:       goarch,
	})
	if err != nil {
		return "", fmt.Errorf("pack %s: %w", binName, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	logf(out, "pushing %s (%s)", tag, digest)
	if err := remote.Write(tag, img, o.remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("push %s: %w", tag, err)
	}
	return tag.Context().Name() + "@" + digest.String(), nil
}

func (o *options) nameOptions() []name.Option {
	if o.insecure {
		return []name.Option{name.Insecure}
	}
	return nil
}

// remoteOptions authenticate with $DOCKER_CONFIG's credentials; an
// insecure registry may also present a certificate nothing verifies.
func (o *options) remoteOptions(ctx context.Context) []remote.Option {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	if o.insecure {
		tr := remote.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // only with --insecure, the operator's explicit choice
		opts = append(opts, remote.WithTransport(tr))
	}
	return opts
}

// run runs a command in dir, its output to out.
func run(ctx context.Context, out io.Writer, dir string, env []string, cmd string, args ...string) error {
	c := exec.CommandContext(ctx, cmd, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	c.Stdout, c.Stderr = out, out
	return c.Run()
}
