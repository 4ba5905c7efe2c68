package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The dockerfile step runs BuildKit without root: rootlesskit makes a
// user namespace in which nonroot is root (its subordinate ids mapped by
// the image's setuid newuidmap), buildkitd runs in it with the OCI worker
// (runc), and buildctl builds the context into an OCI image layout in the
// workspace. It holds no credential: base images come from the mirrors
// or registries the operator names, anonymously, and the push step sends
// the layout.
const (
	// buildkitSocket is buildkitd's socket, on the step's own /tmp.
	buildkitSocketName = "buildkitd.sock"
	// layoutName is the OCI image layout the build leaves in the
	// workspace for the push step.
	layoutName = "image"
	// buildkitdStart bounds the wait for buildkitd's socket.
	buildkitdStart = time.Minute
)

// dockerfileBuild builds o's context with BuildKit into the workspace's
// layout. BuildKit's state (its layer cache) lives in o.cacheDir, which
// the Job mounts from the namespace's directory of the cache claim; one
// build at a time holds it.
func dockerfileBuild(ctx context.Context, o options, src string, out io.Writer) error {
	ctxDir, err := contextDir(src, o.contextDir)
	if err != nil {
		return err
	}
	unlock, err := lockCache(o.cacheDir, out)
	if err != nil {
		return err
	}
	defer unlock()
	tmp := os.TempDir()
	socket := filepath.Join(tmp, buildkitSocketName)
	cfg := filepath.Join(tmp, "buildkitd.toml")
	cni := filepath.Join(tmp, "cni-loopback.json")
	if err := os.WriteFile(cni, []byte(`{"cniVersion":"1.0.0","name":"knit-build-steps","type":"loopback"}`+"\n"), 0o600); err != nil {
		return err
	}
	egress := len(o.allowHosts) > 0
	if err := os.WriteFile(cfg, []byte(buildkitdConfig(filepath.Join(o.cacheDir, "buildkit"), socket, cni, o.cniDir, o.mirrors, o.insecure, egress)), 0o600); err != nil {
		return err
	}
	if egress {
		stopProxy, err := startProxy(ctx, o, proxySocket(), out)
		if err != nil {
			return err
		}
		defer stopProxy()
	}
	stop, err := startBuildkitd(ctx, o, cfg, socket, out)
	if err != nil {
		return err
	}
	defer stop()
	layoutDir := filepath.Join(o.workspace, layoutName)
	if err := os.RemoveAll(layoutDir); err != nil {
		return err
	}
	logf(out, "building %s with BuildKit", path.Join(o.contextDir, o.dockerfile))
	tail := &lineTail{max: 400}
	c := exec.CommandContext(ctx, o.buildctl, buildctlArgs(socket, ctxDir, o, layoutDir)...)
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	c.Stdout, c.Stderr = io.MultiWriter(out, tail), io.MultiWriter(out, tail)
	if err := c.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if msg := failedStep(tail.lines); msg != "" {
			return errors.New(msg)
		}
		return fmt.Errorf("buildctl: %w", err)
	}
	return nil
}

// contextDir is the build context under the checkout: a clean relative
// path that stays inside it (the controller checked it already).
func contextDir(src, dir string) (string, error) {
	clean := path.Clean(strings.TrimPrefix(dir, "./"))
	if dir == "" || path.IsAbs(dir) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("--context %q is not a directory inside the repository", dir)
	}
	full := filepath.Join(src, filepath.FromSlash(clean))
	root, err := os.OpenRoot(src)
	if err != nil {
		return "", fmt.Errorf("the checkout: %w", err)
	}
	defer root.Close()
	info, err := root.Lstat(filepath.FromSlash(clean))
	if err != nil || !info.IsDir() {
		return "", fmt.Errorf("the commit has no directory %s to build", dir)
	}
	return full, nil
}

// lockCache waits for the namespace's BuildKit state: buildkitd allows
// one daemon per root, and a namespace's builds share one root so that
// each finds the layers the last one cached.
func lockCache(dir string, out io.Writer) (func(), error) {
	if err := os.MkdirAll(dir, 0o775); err != nil {
		return nil, fmt.Errorf("the BuildKit cache: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "buildkit.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the BuildKit cache's lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		logf(out, "waiting for another build of this namespace to finish with the BuildKit cache")
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock the BuildKit cache: %w", err)
		}
	}
	return func() { f.Close() }, nil
}

// startBuildkitd starts buildkitd in rootlesskit's user namespace and
// waits for its socket; stop ends it.
func startBuildkitd(ctx context.Context, o options, cfg, socket string, out io.Writer) (stop func(), err error) {
	_ = os.Remove(socket)
	run := filepath.Join(os.TempDir(), "run")
	if err := os.MkdirAll(run, 0o700); err != nil {
		return nil, err
	}
	// --net=host keeps the pod's network for pulls; each step gets a
	// loopback-only namespace of its own (cni). /run (buildkitd's
	// sockets) and /var/lib (CNI's cache) are copied up onto tmpfs in
	// rootlesskit's mount namespace: the root file system is read-only.
	c := exec.Command(o.rootlesskit, rootlesskitArgs(o, cfg)...)
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "XDG_RUNTIME_DIR=" + run, "TMPDIR=" + os.TempDir()}
	if len(o.allowHosts) > 0 {
		c.Env = append(c.Env, envNetnsChild+"="+proxySocket())
	}
	logs := &prefixWriter{w: out, prefix: "buildkitd: "}
	c.Stdout, c.Stderr = logs, logs
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("start buildkitd: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = c.Wait(); close(exited) }()
	stop = func() {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	deadline := time.NewTimer(buildkitdStart)
	defer deadline.Stop()
	for {
		if conn, err := net.Dial("unix", socket); err == nil {
			conn.Close()
			return stop, nil
		}
		select {
		case <-exited:
			return nil, errors.New("buildkitd exited before it served (its output is above in the build's log)")
		case <-deadline.C:
			stop()
			return nil, fmt.Errorf("buildkitd did not serve on %s within %s", socket, buildkitdStart)
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// rootlesskitArgs run buildkitd in rootlesskit's user namespace; with
// allowed hosts, through this binary, which gives it a network namespace
// of its own (netnsChild).
func rootlesskitArgs(o options, cfg string) []string {
	args := []string{"--net=host", "--copy-up=/etc", "--copy-up=/run", "--copy-up=/var/lib",
		"--state-dir=" + filepath.Join(os.TempDir(), "rootlesskit")}
	if len(o.allowHosts) > 0 {
		self, err := os.Executable()
		if err != nil {
			self = "knit-builder"
		}
		args = append(args, self)
	}
	return append(args, o.buildkitd, "--config", cfg)
}

// buildkitdConfig is buildkitd.toml: the OCI worker without a process
// sandbox (no PID namespace: mounting a fresh /proc is what an
// unprivileged container may not do), steps in a loopback-only network
// namespace, the layer cache bounded, and the operator's mirrors.
func buildkitdConfig(root, socket, cniConfig, cniDir string, mirrors []string, insecure, egress bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "root = %q\n\n[grpc]\n  address = [%q]\n\n", root, "unix://"+socket)
	fmt.Fprintf(&b, "[worker.oci]\n  enabled = true\n  rootless = true\n  noProcessSandbox = true\n")
	if egress {
		// Steps share buildkitd's namespace, which holds loopback and the
		// relay to the proxy alone (netnsChild).
		b.WriteString("  networkMode = \"host\"\n  gc = true\n\n")
	} else {
		fmt.Fprintf(&b, "  networkMode = \"cni\"\n  cniConfigPath = %q\n  cniBinaryPath = %q\n  gc = true\n\n", cniConfig, cniDir)
	}
	b.WriteString("[worker.containerd]\n  enabled = false\n\n")
	hosts := map[string][]string{}
	var order []string
	for _, m := range mirrors {
		host, mirror, _ := strings.Cut(m, "=")
		if _, ok := hosts[host]; !ok {
			order = append(order, host)
		}
		hosts[host] = append(hosts[host], mirror)
	}
	slices.Sort(order)
	plain := map[string]bool{}
	for _, host := range order {
		quoted := make([]string, len(hosts[host]))
		for i, m := range hosts[host] {
			quoted[i] = fmt.Sprintf("%q", m)
			plain[m] = insecure
		}
		fmt.Fprintf(&b, "[registry.%q]\n  mirrors = [%s]\n\n", host, strings.Join(quoted, ", "))
	}
	for _, m := range slices.Sorted(func(yield func(string) bool) {
		for m, p := range plain {
			if p && !yield(m) {
				return
			}
		}
	}) {
		if _, mirrored := hosts[m]; !mirrored {
			fmt.Fprintf(&b, "[registry.%q]\n  http = true\n  insecure = true\n\n", m)
		}
	}
	return b.String()
}

// buildctlArgs is the argv of the build: the Dockerfile frontend over the
// context and the Dockerfile's directory, into an OCI layout directory.
// Every value from the repository is an argument of its own after its
// flag.
func buildctlArgs(socket, ctxDir string, o options, layoutDir string) []string {
	file := filepath.FromSlash(o.dockerfile)
	args := []string{"--addr", "unix://" + socket, "build", "--progress=plain",
		"--frontend", "dockerfile.v0",
		"--local", "context=" + ctxDir,
		"--local", "dockerfile=" + filepath.Join(ctxDir, filepath.Dir(file)),
		"--opt", "filename=" + filepath.Base(file),
		"--opt", "platform=" + o.platform,
	}
	if o.target != "" {
		args = append(args, "--opt", "target="+o.target)
	}
	for _, a := range o.buildArgs {
		if len(o.allowHosts) > 0 && isProxyArg(a) {
			continue
		}
		args = append(args, "--opt", "build-arg:"+a)
	}
	if len(o.allowHosts) > 0 {
		for _, v := range proxyVars {
			args = append(args, "--opt", "build-arg:"+v+"="+relayURL)
		}
	}
	return append(args, "--output", "type=oci,dest="+layoutDir+",tar=false")
}

// failedStep is what says why a build failed, from the end of buildctl's
// plain progress: the last lines of the step BuildKit reported an ERROR
// for, that ERROR, and buildctl's own closing error.
func failedStep(lines []string) string {
	id, errLine := "", ""
	for i := len(lines) - 1; i >= 0; i-- {
		if v, rest, ok := strings.Cut(lines[i], " "); ok && strings.HasPrefix(v, "#") && strings.HasPrefix(rest, "ERROR:") {
			id, errLine = v, rest
			break
		}
	}
	var out []string
	if id != "" {
		for _, l := range lines {
			if v, rest, ok := strings.Cut(l, " "); ok && v == id && !strings.HasPrefix(rest, "ERROR:") && !strings.HasPrefix(rest, "[") {
				out = append(out, rest)
			}
		}
		if len(out) > errorLines-2 {
			out = out[len(out)-(errorLines-2):]
		}
		out = append(out, errLine)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "error: ") || strings.HasPrefix(l, "ERROR: ") {
			out = append(out, l)
			break
		}
	}
	if len(out) == 0 && len(lines) > 0 {
		out = lines[max(0, len(lines)-errorLines):]
	}
	return strings.Join(out, "\n")
}

// lineTail keeps the last max lines written to it.
type lineTail struct {
	max     int
	partial []byte
	lines   []string
}

func (t *lineTail) Write(p []byte) (int, error) {
	t.partial = append(t.partial, p...)
	i := strings.LastIndexByte(string(t.partial), '\n')
	if i < 0 {
		return len(p), nil
	}
	for _, l := range strings.Split(string(t.partial[:i]), "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" {
			t.lines = append(t.lines, l)
		}
	}
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
	t.partial = append(t.partial[:0], t.partial[i+1:]...)
	return len(p), nil
}

// prefixWriter writes each line to w with a prefix.
type prefixWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			return len(b), nil
		}
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i])
		p.buf = p.buf[i+1:]
	}
}
