package buildkit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ErrFailed marks a build that ran and failed: the Dockerfile, its
// context or a step is wrong, and building the same again fails again.
// Any other error (a daemon that would not start) may pass.
var ErrFailed = errors.New("build failed")

// Spec is one build.
type Spec struct {
	// Context is the build context on disk.
	Context string
	// File is the Dockerfile, a slash path relative to Context.
	File string
	// Target is the stage to build, "" for the last.
	Target string
	// Args are the build arguments.
	Args map[string]string
	// Repository is where the image goes in the build registry
	// (namespace/repository/name); Tag names this build there.
	Repository, Tag string
}

// Result is a finished build.
type Result struct {
	// Image is <registry>/<repository>@sha256:<digest>.
	Image string
	// Steps are the build's steps as BuildKit reported them.
	Steps []Step
}

// Cached counts the Dockerfile's steps that hit BuildKit's cache, of all
// its steps.
func (r Result) Cached() (cached, all int) {
	for _, s := range r.Steps {
		if s.Instruction() {
			all++
			if s.State == StepCached {
				cached++
			}
		}
	}
	return cached, all
}

// Build builds spec and pushes it, starting the daemons when needed. log
// gets buildctl's plain progress as it comes; onStep (may be nil) each
// step as it ends. A build that ran and failed returns an error wrapping
// ErrFailed with the failing step's last lines.
func (d *Daemon) Build(ctx context.Context, spec Spec, log io.Writer, onStep func(Step)) (Result, error) {
	registry, err := d.Registry(ctx)
	if err != nil {
		return Result{}, err
	}
	meta, err := os.CreateTemp("", "knit-build-metadata-*.json")
	if err != nil {
		return Result{}, err
	}
	meta.Close()
	defer os.Remove(meta.Name())
	ref := registry + "/" + spec.Repository
	cmd := exec.CommandContext(ctx, d.buildctl, buildctlArgs(d.socket, spec, ref+":"+spec.Tag, meta.Name(), d.proxyURL())...)
	cmd.Env = clientEnv()
	progress := &Progress{OnStep: onStep}
	out, err := cmd.StderrPipe()
	if err != nil {
		return Result{}, err
	}
	cmd.Stdout = log
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("start buildctl: %w", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fmt.Fprintln(log, sc.Text())
		progress.Line(sc.Text())
	}
	_, _ = io.Copy(io.Discard, out) // a line past the buffer: let buildctl finish
	res := Result{Steps: progress.Steps()}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		msg := progress.Failure()
		if msg == "" {
			msg = err.Error()
		}
		return res, fmt.Errorf("%w: %s", ErrFailed, msg)
	}
	digest, err := readDigest(meta.Name())
	if err != nil {
		return res, err
	}
	res.Image = ref + "@" + digest
	return res, nil
}

// buildctlArgs is the argv of one build: the Dockerfile frontend over two
// local sources (the context, the Dockerfile's directory), pushed by name.
// Every value a tenant wrote is an argument of its own after its flag.
// proxy, when set, is RUN steps' HTTP(S)_PROXY (proxyArgs).
func buildctlArgs(socket string, spec Spec, name, metadata, proxy string) []string {
	file := filepath.FromSlash(spec.File)
	args := []string{"--addr", "unix://" + socket, "build", "--progress=plain",
		"--frontend", "dockerfile.v0",
		"--local", "context=" + spec.Context,
		"--local", "dockerfile=" + filepath.Join(spec.Context, filepath.Dir(file)),
		"--opt", "filename=" + path.Base(spec.File),
	}
	if spec.Target != "" {
		args = append(args, "--opt", "target="+spec.Target)
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Args)) {
		if proxy != "" && isProxyArg(k) {
			continue
		}
		args = append(args, "--opt", "build-arg:"+k+"="+spec.Args[k])
	}
	args = append(args, proxyArgs(proxy)...)
	return append(args, "--output", "type=image,name="+name+",push=true", "--metadata-file", metadata)
}

// clientEnv is buildctl's environment: knit dev's user's Docker
// configuration (pulls of private bases authenticate through it, in
// buildctl, never inside a step), nothing else of knit dev's.
func clientEnv() []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	if v := os.Getenv("DOCKER_CONFIG"); v != "" {
		env = append(env, "DOCKER_CONFIG="+v)
	}
	return env
}

// readDigest is the pushed manifest's digest from buildctl's metadata.
func readDigest(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read the build's metadata: %w", err)
	}
	var m struct {
		Digest string `json:"containerimage.digest"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("read the build's metadata: %w", err)
	}
	if !strings.HasPrefix(m.Digest, "sha256:") || len(m.Digest) != len("sha256:")+64 {
		return "", fmt.Errorf("the build's metadata names no image digest (%q)", m.Digest)
	}
	return m.Digest, nil
}
