package kobuild

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/knitops/knit/gitsync/build/kopath"
)

const (
	// buildProgressEvery is how often a running build logs that it runs.
	buildProgressEvery = 10 * time.Second
	// buildErrorLines is how many lines of a failed build go into the
	// BuildFailed message; the whole output is in the build's log.
	buildErrorLines = 8
)

// keyedEnv is the go env that decides what a build produces.
var keyedEnv = []string{"GOVERSION", "GOOS", "GOARCH", "GOEXPERIMENT", "CGO_ENABLED", "GOFLAGS", "GOAMD64", "GOARM", "GOARM64", "GO386"}

// Scheme is the prefix of the images a Builder builds: ko://<import
// path>, a Go program built from source as ko builds it.
const Scheme = "ko://"

// A Builder turns the ko:// images of one module dir into binaries kept
// in a cache directory. Builders of different module dirs may share a
// cache: a binary's key covers its sources.
type Builder struct {
	goCmd string
	dir   string // the module dir: where go runs, what ./relative paths are relative to
	cache string
	log   logr.Logger
	ctx   context.Context // builds outlive the replica that asked first; they end with the runtime

	buildsMu  sync.Mutex
	builds    map[string]int64 // builds that ran (cache misses) by image, for Runs
	resolving flight[string]   // by image: replicas starting together share one go list
	linking   flight[string]   // by key: a binary is built once however it is spelled

	envOnce sync.Once
	env     *goEnv
	envErr  error
}

// goEnv is the toolchain's view of the module dir.
type goEnv struct {
	keyed       map[string]string
	mainModules []string
}

// New is the Builder of the module dir dir (where go runs, what ko://./
// paths are relative to), running goCmd and keeping binaries under
// cache. Its builds run until ctx ends, whoever asked for them first:
// builds outlive the replica that asked first.
func New(ctx context.Context, goCmd, dir, cache string, log logr.Logger) *Builder {
	return &Builder{goCmd: goCmd, dir: dir, cache: cache, log: log, ctx: ctx}
}

// An Error is a build that failed, or an image that cannot be built; its
// message, "go build <image>: " and the first lines go printed that say
// what went wrong, is what the runtime's BuildFailed shows. The whole
// output is in <cache>/<key>/build.log.
type Error struct {
	image string
	lines []string
}

func (e *Error) Error() string {
	return fmt.Sprintf("go build %s: %s", e.image, strings.Join(e.lines, "\n"))
}

// Build returns the path of the binary for a ko:// image, building it
// only when its sources changed since it was last built. Callers asking
// for one image together share one go list, and one binary is built
// once however its image is spelled. A build that fails is an *Error.
func (b *Builder) Build(ctx context.Context, image string) (string, error) {
	return b.resolving.do(ctx, image, func() (string, error) { return b.build(image) })
}

func (b *Builder) build(image string) (string, error) {
	pkg := strings.TrimPrefix(image, Scheme)
	// pkg becomes an argument of go list, build and install: refuse
	// anything but one plain package (a flag, a pattern, ../).
	if err := kopath.Check(pkg); err != nil {
		return "", &Error{image: image, lines: []string{err.Error()}}
	}
	env, err := b.goEnv()
	if err != nil {
		return "", &Error{image: image, lines: []string{err.Error()}}
	}
	pkgs, err := b.list(pkg)
	if err != nil && !env.inMainModule(pkg) && strings.Contains(err.Error(), "no required module provides package") {
		return b.install(image, pkg, env)
	}
	if err != nil {
		return "", &Error{image: image, lines: errorLines(err.Error())}
	}
	target := pkgs[len(pkgs)-1]
	if target.Name != "main" {
		return "", &Error{image: image, lines: []string{fmt.Sprintf("package %s is not a main package", target.ImportPath)}}
	}
	key, err := buildKey(env.keyed, pkgs, func(name string) (io.ReadCloser, error) { return os.Open(name) })
	if err != nil {
		return "", &Error{image: image, lines: []string{err.Error()}}
	}
	dir := filepath.Join(b.cache, key[:32])
	bin := filepath.Join(dir, binaryName(target.ImportPath))
	if fileExists(bin) {
		b.log.V(1).Info("Using cached build", "image", image, "binary", bin)
		return bin, nil
	}
	return b.linking.do(b.ctx, key, func() (string, error) {
		if fileExists(bin) {
			return bin, nil
		}
		return bin, b.run(image, dir, bin, nil, "build", "-trimpath", "-buildvcs=false", "-v", "-o", bin+".tmp", "--", pkg)
	})
}

// install is the fallback for an import path no module of the module
// dir's build list provides (a package of a required module builds at
// the required version, as ko builds it): `go install <path>@latest`
// into the cache. @latest is resolved on the
// first use only; remove <state>/builds to pick up a newer release.
func (b *Builder) install(image, pkg string, env *goEnv) (string, error) {
	key, err := buildKey(env.keyed, []listedPackage{{ImportPath: "install " + pkg, Standard: true}}, nil)
	if err != nil {
		return "", &Error{image: image, lines: []string{err.Error()}}
	}
	dir := filepath.Join(b.cache, key[:32])
	bin := filepath.Join(dir, binaryName(pkg))
	return b.linking.do(b.ctx, key, func() (string, error) {
		if fileExists(bin) {
			return bin, nil
		}
		gobin := filepath.Join(dir, "gobin.tmp")
		if err := os.RemoveAll(gobin); err != nil {
			return "", err
		}
		err := b.run(image, dir, "", []string{"GOBIN=" + gobin}, "install", "-trimpath", "-v", "--", pkg+"@latest")
		if err != nil {
			return "", err
		}
		entries, err := os.ReadDir(gobin)
		if err != nil || len(entries) != 1 {
			return "", &Error{image: image, lines: []string{fmt.Sprintf("go install %s@latest left no single binary in %s", pkg, gobin)}}
		}
		if err := os.Rename(filepath.Join(gobin, entries[0].Name()), bin); err != nil {
			return "", err
		}
		return bin, os.RemoveAll(gobin)
	})
}

// run runs one go build or go install in dir (the module dir for a build,
// the cache for an install), streaming its output to the log and to
// <dir>/build.log; out, when set, is renamed from out.tmp on success.
func (b *Builder) run(image, dir, out string, env []string, args ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(dir, "build.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	log := b.log.WithValues("image", image)
	log.Info("Building image", "command", "go "+strings.Join(args, " "), "log", logFile.Name())

	progress := &buildOutput{log: log}
	cmd := exec.CommandContext(b.ctx, b.goCmd, args...)
	cmd.Dir = b.dir
	if args[0] == "install" {
		cmd.Dir = dir
	}
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = io.MultiWriter(logFile, progress)
	cmd.Stderr = cmd.Stdout
	began := time.Now()
	stop := progress.report(began)
	err = cmd.Run()
	stop()
	if err != nil {
		lines := progress.errorLines()
		if len(lines) == 0 {
			lines = []string{err.Error()}
		}
		log.Info("Build failed", "error", strings.Join(lines, "\n"), "log", logFile.Name())
		return &Error{image: image, lines: lines}
	}
	if out != "" {
		if err := os.Rename(out+".tmp", out); err != nil {
			return err
		}
	}
	b.buildsMu.Lock()
	if b.builds == nil {
		b.builds = map[string]int64{}
	}
	b.builds[image]++
	b.buildsMu.Unlock()
	log.Info("Built image", "duration", time.Since(began).Round(time.Millisecond), "packages", progress.packages.Load())
	return nil
}

// Runs counts the builds of image that ran (cache misses, not the
// binaries found in the cache), for tests that a rebuild is saved.
func (b *Builder) Runs(image string) int64 {
	b.buildsMu.Lock()
	defer b.buildsMu.Unlock()
	return b.builds[image]
}

// list runs `go list -deps` for the key; its errors read like go build's.
func (b *Builder) list(pkg string) ([]listedPackage, error) {
	cmd := exec.CommandContext(b.ctx, b.goCmd, "list", "-deps", "-json="+listFields, "--", pkg)
	cmd.Dir = b.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, err
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("read go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("go list %s found no package", pkg)
	}
	return pkgs, nil
}

// goEnv asks the toolchain once for what keys builds and for the main
// modules (several in a workspace, none outside a module).
func (b *Builder) goEnv() (*goEnv, error) {
	b.envOnce.Do(func() {
		cmd := exec.CommandContext(b.ctx, b.goCmd, append([]string{"env", "-json", "GOMOD"}, keyedEnv...)...)
		cmd.Dir = b.dir
		out, err := cmd.Output()
		if err != nil {
			b.envErr = fmt.Errorf("go env: %w", commandError(err))
			return
		}
		env := &goEnv{keyed: map[string]string{}}
		if err := json.Unmarshal(out, &env.keyed); err != nil {
			b.envErr = fmt.Errorf("go env: %w", err)
			return
		}
		gomod := env.keyed["GOMOD"]
		delete(env.keyed, "GOMOD")
		if gomod != "" && gomod != os.DevNull {
			cmd := exec.CommandContext(b.ctx, b.goCmd, "list", "-m", "-f", "{{.Path}}")
			cmd.Dir = b.dir
			out, err := cmd.Output()
			if err != nil {
				b.envErr = fmt.Errorf("go list -m: %w", commandError(err))
				return
			}
			env.mainModules = strings.Fields(string(out))
		}
		b.env = env
	})
	return b.env, b.envErr
}

// inMainModule reports whether pkg is built from the module dir's sources:
// a relative path, or an import path inside a main module.
func (e *goEnv) inMainModule(pkg string) bool {
	if pkg == "." || strings.HasPrefix(pkg, "./") || strings.HasPrefix(pkg, "../") {
		return true
	}
	for _, m := range e.mainModules {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return true
		}
	}
	return false
}

// errorLines picks the first lines that say what went wrong out of go's
// output, skipping the package names -v prints and download notices.
func errorLines(output string) []string {
	var lines []string
	for line := range strings.SplitSeq(output, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" || strings.HasPrefix(line, "go: downloading") || isPackageLine(line) {
			continue
		}
		if lines = append(lines, line); len(lines) == buildErrorLines {
			break
		}
	}
	return lines
}

// isPackageLine reports whether line is a package path printed by -v.
func isPackageLine(line string) bool {
	return line != "" && !strings.ContainsAny(line, " :\t")
}

// buildOutput follows a build's output: each line to the log at V(1), the
// number of packages compiled (-v prints their paths), and the first lines
// that are not package paths, for the error message.
type buildOutput struct {
	log      logr.Logger
	packages atomic.Int64
	partial  []byte
	mu       sync.Mutex
	errs     []string
}

func (o *buildOutput) Write(p []byte) (int, error) {
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(o.partial[:i])
		o.partial = o.partial[i+1:]
		o.log.V(1).Info("go", "output", line)
		if isPackageLine(line) {
			o.packages.Add(1)
		}
		if len(errorLines(line)) == 0 {
			continue
		}
		o.mu.Lock()
		if len(o.errs) < buildErrorLines {
			o.errs = append(o.errs, line)
		}
		o.mu.Unlock()
	}
}

// errorLines are the lines kept so far; call once the build is over.
func (o *buildOutput) errorLines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append(o.errs, errorLines(string(o.partial))...)
}

// report logs every buildProgressEvery that the build still runs, until
// the returned stop is called.
func (o *buildOutput) report(began time.Time) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(buildProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				o.log.Info("Still building image", "elapsed", time.Since(began).Round(time.Second), "packages", o.packages.Load())
			}
		}
	}()
	return func() { close(done) }
}

func commandError(err error) error {
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && len(exitErr.Stderr) > 0 {
		return errors.New(strings.TrimSpace(string(exitErr.Stderr)))
	}
	return err
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
