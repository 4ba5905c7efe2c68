package runtime

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/probes"
	"github.com/knitops/knit/local/view"
)

// probeTarget is container c of r as package probes probes it: at the
// replica's address (the shared network's while it has none), through its
// port map, exec commands run by exec.
func (r *replica) probeTarget(c *corev1.Container, exec *containerExec) probes.Target {
	net := r.net
	if net == nil {
		net = sharedNetwork
	}
	return probes.Target{Container: c, IP: net.ip, Port: r.ports.resolve, Exec: exec.run}
}

// containerExec runs exec probes' and hooks' commands for one container
// (execFor): in the replica's network, and inside the container's view
// as its user, or through runc exec for an image's container.
type containerExec struct {
	net *podNetwork
	env []string
	dir string
	// argv0 resolves a command's first word (koAppArgv0); nil leaves it
	// as written.
	argv0 func(ctx context.Context, name string) (string, error)
	// cred is the user commands run as (the container's); nil: knit
	// dev's.
	cred *syscall.Credential
	// inside is the container process whose mount and UTS namespaces and
	// root commands run in (view.Join); 0: knit dev's.
	inside int
	// limits are the container's privileges (view.Plan.Limits), which a
	// command in its view is held to as well.
	limits *view.Privileges
	// wrapExec, when set, is the argv that runs a command inside the
	// container (runc exec), which then needs nothing else here.
	wrapExec func([]string) []string
}

// newContainerExec runs commands in net (nil: the shared network), with
// env and in dir, as knit dev and in its view until told otherwise.
func newContainerExec(net *podNetwork, env []string, dir string) *containerExec {
	if net == nil {
		net = sharedNetwork
	}
	return &containerExec{net: net, env: env, dir: dir}
}

// run runs argv and waits for it; a failure says how it ended and the
// first line of what it wrote.
func (e *containerExec) run(ctx context.Context, argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("exec probe has no command")
	}
	if e.wrapExec != nil {
		argv = e.wrapExec(argv)
	}
	name := argv[0]
	if e.argv0 != nil && e.wrapExec == nil {
		var err error
		if name, err = e.argv0(ctx, name); err != nil {
			return err
		}
	}
	path, err := lookPath(name, e.env, e.dir)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env, cmd.Dir, cmd.SysProcAttr = e.env, e.dir, execAttr(e.cred)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	var enter func() (bool, error)
	if pid := e.inside; pid != 0 {
		limits := e.limits
		enter = func() (bool, error) {
			stuck, err := view.Join(pid)
			if err == nil && limits != nil {
				err = limits.Apply(true) // its root may be a mirror of /: no chroot either
			}
			return stuck, err
		}
	}
	if err := e.net.runAfter(cmd, enter); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, firstLine(msg))
		}
		return err
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
