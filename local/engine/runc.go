package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// ErrNotExist is wrapped by Kill when runc does not know the container.
var ErrNotExist = errors.New("container does not exist")

// ErrNotRunning is wrapped by Kill when the container has already exited
// (a supervisor racing a container's own exit sees this).
var ErrNotRunning = errors.New("container not running")

// Runc drives the runc binary.
type Runc struct {
	Path string // runc binary; "" means "runc" on PATH
	Root string // runc --root (state dir); "" means runc's default /run/runc
}

// runcFallbacks are where Debian and most distributions install runc, for
// when knit runs with a PATH that lacks /usr/sbin (e.g. sudo without
// secure_path, systemd units).
var runcFallbacks = []string{"/usr/sbin/runc", "/usr/bin/runc"}

// FindRunc returns the path of the runc binary.
func FindRunc() (string, error) {
	if p, err := exec.LookPath("runc"); err == nil {
		return p, nil
	}
	for _, p := range runcFallbacks {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("runc not found on PATH nor at %s: install it (Debian/Ubuntu: apt-get install runc)", strings.Join(runcFallbacks, ", "))
}

// WriteBundle writes bundle/config.json (0600: it holds the environment,
// which may carry secrets) and creates bundle/rootfs if missing, so the
// caller can mount the image there. config.json is replaced atomically, so
// runc never reads a half-written spec.
func (r Runc) WriteBundle(bundle string, s *specs.Spec) error {
	if err := os.MkdirAll(filepath.Join(bundle, "rootfs"), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		return fmt.Errorf("encode spec: %w", err)
	}
	f, err := os.CreateTemp(bundle, ".config.json-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(bundle, "config.json"))
}

func (r Runc) base() []string {
	p := r.Path
	if p == "" {
		p = "runc"
	}
	argv := []string{p}
	if r.Root != "" {
		argv = append(argv, "--root", r.Root)
	}
	return argv
}

// RunArgv is the argv (argv[0] is the runc binary) that creates and runs
// container id from bundle in the foreground: without --detach runc stays
// the container's parent, forwards the signals it receives to the
// container's init, passes its own stdio through (terminal is false), exits
// with the container's exit status (128+signal if it was killed). --keep
// leaves the stopped container's state and cgroup until Delete, so that
// the caller can read what the run left there (an OOM kill, in cgroup v1
// counted only in the victim's cgroup). If runc itself is SIGKILLed the
// container keeps running: call Delete. A failure to start the process
// (e.g. a missing executable) also exits 1, with the reason on runc's
// stderr. --no-new-keyring
// keeps the container in the session keyring of its parent instead of
// creating one per container, which would eat into the root user's key
// quota (maxkeys) on hosts running many containers.
func (r Runc) RunArgv(id, bundle string) []string {
	return append(r.base(), "run", "--bundle", bundle, "--no-new-keyring", "--keep", id)
}

// ExecArgv is the argv that runs argv inside the running container id, with
// the user, environment, cwd, capabilities, no_new_privs and seccomp filter
// of the container's process (runc 1.1 reads them from the bundle's
// config.json). runc 1.1 declares exec with SkipArgReorder, so flag parsing
// stops at the container id and everything after it is the command
// verbatim: a "--" after the id would become argv[0]. The "--" goes before
// the id instead, which also keeps an id starting with "-" from being read
// as a flag.
func (r Runc) ExecArgv(id string, argv []string) []string {
	out := append(r.base(), "exec", "--", id)
	return append(out, argv...)
}

// Delete removes container id, killing it with SIGKILL first if it still
// runs (runc then waits for it to die). A container runc does not know is
// not an error: runc run removes its state itself when the container exits.
func (r Runc) Delete(ctx context.Context, id string) error {
	out, err := r.run(ctx, "delete", "--force", id)
	if err != nil && strings.Contains(out, "does not exist") {
		return nil
	}
	return err
}

// Kill sends sig to the container's init process, or with all to every
// process in the container's cgroup (runc 1.1 freezes the cgroup meanwhile,
// so nothing forks past it). Errors wrap ErrNotExist or ErrNotRunning when
// the container is gone or has exited.
func (r Runc) Kill(ctx context.Context, id string, sig syscall.Signal, all bool) error {
	args := []string{"kill"}
	if all {
		args = append(args, "--all")
	}
	args = append(args, "--", id, strconv.Itoa(int(sig)))
	out, err := r.run(ctx, args...)
	switch {
	case err == nil:
		return nil
	case strings.Contains(out, "does not exist"):
		return fmt.Errorf("%w: %w", ErrNotExist, err)
	case strings.Contains(out, "not running"):
		return fmt.Errorf("%w: %w", ErrNotRunning, err)
	}
	return err
}

// run runs a short runc command, returning its stderr in the error.
func (r Runc) run(ctx context.Context, args ...string) (string, error) {
	argv := append(r.base(), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		return msg, fmt.Errorf("runc %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	return out.String(), nil
}

// InitPID is the host pid of container id's init process (the app), as
// `runc state` reports it; runc's own pid, which the caller supervises,
// is its parent.
func (r Runc) InitPID(ctx context.Context, id string) (int, error) {
	out, err := r.run(ctx, "state", id)
	if err != nil {
		return 0, err
	}
	var st struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return 0, fmt.Errorf("runc state %s: %w", id, err)
	}
	return st.Pid, nil
}
