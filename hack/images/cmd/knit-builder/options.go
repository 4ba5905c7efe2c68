package main

import (
	"errors"
	"flag"
	"fmt"
	"path"
	"strings"
)

// The steps of a build, in order; --step runs one, by default all.
const (
	stepCache   = "cache"
	stepFetch   = "fetch"
	stepCompile = "compile"
	stepPush    = "push"
	// stepDockerfile builds a dockerfile:// image with BuildKit, in place
	// of compile.
	stepDockerfile = "dockerfile"
)

// options are the builder's flags, as gitsync/build's Job passes them.
type options struct {
	step                  string
	source, commit, pkg   string
	image, tag, platform  string
	insecure              bool
	workspace, caBundle   string
	cacheDir              string
	terminationLog, goCmd string

	// A dockerfile:// build's: the context directory in the repository
	// (set: this is a Dockerfile build), the Dockerfile in it, the stage,
	// KEY=VALUE build arguments, HOST=MIRROR registry mirrors, and the
	// programs it runs.
	contextDir, dockerfile, target string
	buildArgs, mirrors             list
	cniDir                         string
	buildkitd, buildctl            string
	rootlesskit                    string
	// allowHosts are the hosts RUN steps may reach through
	// knit-build-proxy (buildProxy); none: no network at all.
	allowHosts list
	buildProxy string
}

// list is a repeatable string flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func (o *options) register(fl *flag.FlagSet) {
	fl.StringVar(&o.step, "step", "", "run one step: cache, fetch, compile, dockerfile or push; all but cache when empty")
	fl.StringVar(&o.source, "source", "", "Git URL to fetch the commit from")
	fl.StringVar(&o.commit, "commit", "", "full SHA of the commit to build")
	fl.StringVar(&o.pkg, "package", "", "package to build, relative to the repository's root (./cmd/hello) or an import path")
	fl.StringVar(&o.image, "image", "", "registry repository to push to, e.g. registry.example/ns/repo/hello")
	fl.StringVar(&o.tag, "tag", "", "tag of the pushed image: the build key")
	fl.StringVar(&o.platform, "platform", "linux/amd64", "os/arch of the image")
	fl.BoolVar(&o.insecure, "insecure", false, "allow plain HTTP and unverified TLS to the registry")
	fl.StringVar(&o.workspace, "workspace", "/workspace", "scratch directory for the checkout and the binary")
	fl.StringVar(&o.cacheDir, "cache-dir", "", "directory the cache step creates")
	fl.StringVar(&o.caBundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA bundle copied into the image; empty for none")
	fl.StringVar(&o.terminationLog, "termination-log", "/dev/termination-log", "where the JSON result goes (- for stdout)")
	fl.StringVar(&o.goCmd, "go", "go", "the go command")
	fl.StringVar(&o.contextDir, "context", "", "dockerfile:// builds: the context directory, relative to the repository's root")
	fl.StringVar(&o.dockerfile, "dockerfile", "Dockerfile", "dockerfile:// builds: the Dockerfile, relative to the context")
	fl.StringVar(&o.target, "target", "", "dockerfile:// builds: the stage to build, the last when empty")
	fl.Var(&o.buildArgs, "build-arg", "dockerfile:// builds: KEY=VALUE (repeatable)")
	fl.Var(&o.mirrors, "mirror", "dockerfile:// builds: HOST=MIRROR, a registry tried first for HOST's images (repeatable)")
	fl.StringVar(&o.cniDir, "cni-dir", "/usr/lib/cni", "dockerfile:// builds: the CNI plugins' directory")
	fl.StringVar(&o.buildkitd, "buildkitd", "buildkitd", "the buildkitd program")
	fl.StringVar(&o.buildctl, "buildctl", "buildctl", "the buildctl program")
	fl.StringVar(&o.rootlesskit, "rootlesskit", "rootlesskit", "the rootlesskit program")
	fl.Var(&o.allowHosts, "allow-host", "dockerfile:// builds: a host[:port] RUN steps may reach through the build proxy (repeatable); none: no network")
	fl.StringVar(&o.buildProxy, "build-proxy", "knit-build-proxy", "the knit-build-proxy program")
}

// dockerfileBuild reports whether o builds a dockerfile:// image.
func (o *options) dockerfileBuild() bool { return o.contextDir != "" }

// runs reports whether the step is one o runs.
func (o *options) runs(step string) bool {
	if o.step == "" {
		switch step {
		case stepCache:
			return false
		case stepCompile:
			return !o.dockerfileBuild()
		case stepDockerfile:
			return o.dockerfileBuild()
		}
		return true
	}
	return o.step == step
}

// required are the flags each step needs.
var required = map[string][]string{
	stepCache:   {"cache-dir"},
	stepFetch:   {"source", "commit"},
	stepCompile: {"package"},
	stepPush:    {"image", "tag"},
	// The Dockerfile's build keeps BuildKit's state in the cache.
	stepDockerfile: {"context", "cache-dir"},
}

func (o *options) validate() error {
	switch o.step {
	case "", stepCache, stepFetch, stepCompile, stepDockerfile, stepPush:
	default:
		return fmt.Errorf("--step %q is none of cache, fetch, compile, dockerfile, push", o.step)
	}
	values := map[string]string{"source": o.source, "commit": o.commit, "package": o.pkg, "image": o.image, "tag": o.tag,
		"cache-dir": o.cacheDir, "context": o.contextDir}
	var missing []string
	for _, step := range []string{stepCache, stepFetch, stepCompile, stepDockerfile, stepPush} {
		for _, name := range required[step] {
			if o.runs(step) && values[name] == "" {
				missing = append(missing, "--"+name)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	if o.commit != "" && !isSHA(o.commit) {
		return fmt.Errorf("--commit %q is not a full commit SHA", o.commit)
	}
	if o.pkg != "" {
		if err := checkPackage(o.pkg); err != nil {
			return err
		}
	}
	if _, _, err := o.goosArch(); err != nil {
		return err
	}
	return o.validateDockerfile()
}

// validateDockerfile checks a dockerfile:// build's settings as the
// controller did (gitsync/build/dockerfile, which this module cannot
// import): paths inside the repository, KEY=VALUE arguments, HOST=MIRROR
// mirrors, a stage name that is not a flag.
func (o *options) validateDockerfile() error {
	if !o.dockerfileBuild() {
		return nil
	}
	for _, p := range []struct{ flag, v string }{{"context", o.contextDir}, {"dockerfile", o.dockerfile}} {
		clean := path.Clean(strings.TrimPrefix(p.v, "./"))
		if p.v == "" || path.IsAbs(p.v) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("--%s %q is not a path inside the repository", p.flag, p.v)
		}
	}
	if strings.HasPrefix(o.target, "-") {
		return fmt.Errorf("--target %q is not a stage name", o.target)
	}
	for _, a := range o.buildArgs {
		if k, _, ok := strings.Cut(a, "="); !ok || k == "" {
			return fmt.Errorf("--build-arg %q is not KEY=VALUE", a)
		}
	}
	for _, m := range o.mirrors {
		if h, mirror, ok := strings.Cut(m, "="); !ok || h == "" || mirror == "" {
			return fmt.Errorf("--mirror %q is not HOST=MIRROR", m)
		}
	}
	return nil
}

func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// checkPackage refuses a package go would not read as one plain package.
// The controller checked it already (gitsync/build/kopath, which this
// module cannot import: it keeps knit's module graph out); this is the
// same rule, kept short — one path of clean elements of
// [A-Za-z0-9-._~+] — and go build gets "--" before it besides.
func checkPackage(pkg string) error {
	bad := errors.New("not a package path: want ./dir or an import path")
	if pkg == "." || pkg == "./" {
		return nil
	}
	rel := strings.TrimPrefix(pkg, "./")
	if reservedPatterns[pkg] || len(pkg) > 512 || rel == "" || path.Clean(rel) != rel {
		return fmt.Errorf("--package %q: %w", pkg, bad)
	}
	for elem := range strings.SplitSeq(rel, "/") {
		if elem == "" || elem[0] == '-' || elem[0] == '.' || elem[len(elem)-1] == '.' || strings.Trim(elem, pathChars) != "" {
			return fmt.Errorf("--package %q: %w", pkg, bad)
		}
	}
	return nil
}

// reservedPatterns are go's pattern names, which are not packages.
var reservedPatterns = map[string]bool{"all": true, "std": true, "cmd": true, "tool": true, "work": true}

const pathChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+"

// goosArch splits --platform.
func (o *options) goosArch() (goos, goarch string, err error) {
	goos, goarch, ok := strings.Cut(o.platform, "/")
	if !ok || goos == "" || goarch == "" {
		return "", "", fmt.Errorf("--platform %q is not os/arch", o.platform)
	}
	return goos, goarch, nil
}

// program is the binary's name in the image: the repository's last
// element, as the controller named it after the package.
func (o *options) program() string { return path.Base(o.image) }
