package buildkit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"github.com/knitops/knit/local/buildproxy"
)

// Options say where the daemons keep their state and what they may pull.
type Options struct {
	// Dir holds buildkitd's root and configuration and the registry's
	// storage: <state dir>/buildkit.
	Dir string
	// BinDir is searched first for buildkitd, buildctl and registry, then
	// PATH.
	BinDir string
	// CNIDirs are searched for the CNI plugins (loopback; bridge and
	// host-local too when AllowHosts is set); default Debian's and the
	// CNI project's places.
	CNIDirs []string
	// AllowHosts are the hosts RUN steps may reach, through a proxy knit
	// dev runs (package buildproxy) on a network of their own
	// (stepnet_linux.go). Empty, the default, gives steps no network at
	// all: knit dev cannot know which package registries a user's builds
	// need, so it allows none until the operator names them.
	AllowHosts buildproxy.AllowList
	// StepSubnet is the addresses of RUN steps' network when AllowHosts
	// is set; DefaultStepSubnet when unset.
	StepSubnet netip.Prefix
	// Mirrors maps a registry host (docker.io) to hosts tried first for
	// its images (127.0.0.1:5000): how a build finds its bases on a
	// machine that cannot reach the registry its Dockerfile names.
	// Mirrors on loopback are spoken to in plain HTTP.
	Mirrors map[string][]string
	// Log gets the daemons' lifecycle; their own output goes to files in
	// Dir.
	Log logr.Logger
}

// proc is a running daemon; done closes when it exits.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// Daemon is buildkitd and the registry builds push to, started by the
// first build and stopped by Close.
type Daemon struct {
	opts Options

	mu       sync.Mutex
	started  bool
	procs    []proc
	registry string // host:port on loopback
	socket   string
	buildctl string
	// egress is RUN steps' way out when AllowHosts is set, nil else.
	egress *stepEgress
}

// New returns a Daemon that starts nothing until it is needed.
func New(opts Options) *Daemon {
	if len(opts.CNIDirs) == 0 {
		opts.CNIDirs = []string{"/usr/lib/cni", "/opt/cni/bin"}
	}
	if !opts.StepSubnet.IsValid() {
		opts.StepSubnet = DefaultStepSubnet
	}
	return &Daemon{opts: opts}
}

// Registry is host:port of the registry builds push to, starting the
// daemons when they are not running.
func (d *Daemon) Registry(ctx context.Context) (string, error) {
	if err := d.start(ctx); err != nil {
		return "", err
	}
	return d.registry, nil
}

// start starts the registry and buildkitd once; a failed start is tried
// again by the next build.
func (d *Daemon) start(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started {
		return nil
	}
	bins, err := d.binaries()
	if err != nil {
		return err
	}
	cni, err := findPlugins(d.opts.CNIDirs, d.plugins()...)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.opts.Dir, 0o700); err != nil {
		return err
	}
	cniConfig, err := d.stepNetworkConfig()
	if err != nil {
		d.stopLocked()
		return err
	}
	addr, err := registryAddr(d.opts.Dir)
	if err != nil {
		d.stopLocked()
		return err
	}
	if err := d.startRegistry(ctx, bins["registry"], addr); err != nil {
		d.stopLocked()
		return err
	}
	if err := d.startBuildkitd(ctx, bins["buildkitd"], cniConfig, cni, addr); err != nil {
		d.stopLocked()
		return err
	}
	d.registry, d.buildctl, d.started = addr, bins["buildctl"], true
	return nil
}

// binaries finds the three programs, or says how to get them.
func (d *Daemon) binaries() (map[string]string, error) {
	out := map[string]string{}
	var missing []string
	for _, name := range []string{"buildkitd", "buildctl", "registry"} {
		p := filepath.Join(d.opts.BinDir, name)
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			if p, err = exec.LookPath(name); err != nil {
				missing = append(missing, name)
				continue
			}
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out[name] = p
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("dockerfile:// builds need %s in %s or on PATH (make tools builds them)", strings.Join(missing, ", "), d.opts.BinDir)
	}
	return out, nil
}

// plugins are the CNI plugins RUN steps' networks need.
func (d *Daemon) plugins() []string {
	if len(d.opts.AllowHosts) == 0 {
		return []string{"loopback"}
	}
	return []string{"loopback", "bridge", "host-local"}
}

// findPlugins is the directory holding every CNI plugin named: buildkitd
// takes one.
func findPlugins(dirs []string, plugins ...string) (string, error) {
	for _, dir := range dirs {
		if hasAll(dir, plugins) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("dockerfile:// builds run their steps in a network namespace of their own, made by the CNI plugins %s, found together in none of %s (Debian: apt-get install containernetworking-plugins)",
		strings.Join(plugins, ", "), strings.Join(dirs, ", "))
}

func hasAll(dir string, plugins []string) bool {
	for _, p := range plugins {
		if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}

// registryAddr is the loopback address of the registry: chosen once and
// kept in dir, because the images built are recorded (and run) by it.
func registryAddr(dir string) (string, error) {
	file := filepath.Join(dir, "registry-addr")
	if b, err := os.ReadFile(file); err == nil {
		if addr := strings.TrimSpace(string(b)); addr != "" {
			return addr, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("choose the build registry's port: %w", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	if err := os.WriteFile(file, []byte(addr+"\n"), 0o600); err != nil {
		return "", err
	}
	return addr, nil
}

func (d *Daemon) startRegistry(ctx context.Context, bin, addr string) error {
	config := filepath.Join(d.opts.Dir, "registry.yml")
	body := fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: false
http:
  addr: %s
`, filepath.Join(d.opts.Dir, "registry"), addr)
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		return err
	}
	if err := d.spawn("registry", bin, "serve", config); err != nil {
		return err
	}
	return waitFor(ctx, "the build registry on "+addr, func() error {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
}

func (d *Daemon) startBuildkitd(ctx context.Context, bin, cniConfig, cniDir, registry string) error {
	d.socket = socketPath(d.opts.Dir)
	_ = os.Remove(d.socket) // a killed knit dev's
	config := filepath.Join(d.opts.Dir, "buildkitd.toml")
	if err := os.WriteFile(config, []byte(buildkitdConfig(filepath.Join(d.opts.Dir, "root"), d.socket, cniConfig, cniDir, registry, d.opts.Mirrors)), 0o600); err != nil {
		return err
	}
	if err := d.spawn("buildkitd", bin, "--config", config); err != nil {
		return err
	}
	return waitFor(ctx, "buildkitd on "+d.socket, func() error {
		c, err := net.Dial("unix", d.socket)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// buildkitdConfig is buildkitd.toml: the OCI worker (runc) alone, steps
// in the network cniConfig says, the build registry and loopback mirrors
// in plain HTTP.
func buildkitdConfig(root, socket, cniConfig, cniDir, registry string, mirrors map[string][]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "root = %q\n\n[grpc]\n  address = [%q]\n\n", root, "unix://"+socket)
	fmt.Fprintf(&b, "[worker.oci]\n  enabled = true\n  networkMode = \"cni\"\n  cniConfigPath = %q\n  cniBinaryPath = %q\n  gc = true\n\n", cniConfig, cniDir)
	b.WriteString("[worker.containerd]\n  enabled = false\n\n")
	plain := map[string]bool{registry: true}
	for _, host := range slices.Sorted(maps.Keys(mirrors)) {
		ms := mirrors[host]
		quoted := make([]string, len(ms))
		for i, m := range ms {
			quoted[i] = fmt.Sprintf("%q", m)
			if isLoopback(m) {
				plain[m] = true
			}
		}
		fmt.Fprintf(&b, "[registry.%q]\n  mirrors = [%s]\n\n", host, strings.Join(quoted, ", "))
	}
	for _, host := range slices.Sorted(maps.Keys(plain)) {
		if _, mirrored := mirrors[host]; mirrored {
			continue
		}
		fmt.Fprintf(&b, "[registry.%q]\n  http = true\n\n", host)
	}
	return b.String()
}

// isLoopback reports whether host:port names this machine's loopback.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// socketPath is buildkitd's socket: in dir when the path fits a Unix
// socket's 108 bytes, else in the temporary directory under a name
// derived from dir.
func socketPath(dir string) string {
	p := filepath.Join(dir, "buildkitd.sock")
	if len(p) < 100 {
		return p
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(os.TempDir(), "knit-buildkitd-"+hex.EncodeToString(sum[:6])+".sock")
}

// spawn starts a daemon with its output in Dir/<name>.log; it dies with
// knit dev.
func (d *Daemon) spawn(name, bin string, args ...string) error {
	logFile, err := os.OpenFile(filepath.Join(d.opts.Dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir()}
	cmd.SysProcAttr = daemonAttrs()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := proc{cmd: cmd, done: make(chan struct{})}
	d.procs = append(d.procs, p)
	go func() { _ = cmd.Wait(); close(p.done) }()
	d.opts.Log.Info("Started for dockerfile:// builds", "daemon", name, "pid", cmd.Process.Pid, "log", logFile.Name())
	return nil
}

// waitFor polls ready every 50 ms for 30 s at most.
func waitFor(ctx context.Context, what string, ready func() error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var err error
	for {
		if err = ready(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not start: %w (its log is beside its configuration)", what, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close stops the daemons: SIGTERM, then SIGKILL after 10 s.
func (d *Daemon) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopLocked()
	return nil
}

func (d *Daemon) stopLocked() {
	for _, p := range d.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.After(10 * time.Second)
	for _, p := range d.procs {
		select {
		case <-p.done:
		case <-deadline:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	d.procs, d.started = nil, false
	if d.egress != nil { // after buildkitd: its steps' interfaces are on the bridge
		if err := d.egress.Close(); err != nil {
			d.opts.Log.Error(err, "Removing RUN steps' network")
		}
		d.egress = nil
	}
	if d.socket != "" {
		_ = os.Remove(d.socket)
	}
}
