package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// RUN steps' way out when the operator allows hosts (--allow-host). A
// rootless build owns no network namespace a bridge could join, and a
// pod has no /dev/net/tun for slirp4netns, so the steps reach the
// allow-list proxy through the loopback of a namespace of their own:
//
//   - knit-build-proxy (package buildproxy of knit's module) runs in the
//     pod's network namespace, listening on a Unix socket in the step's
//     /tmp, and dials only what the allow list names;
//   - inside rootlesskit's user namespace, this binary (envNetnsChild)
//     makes a network namespace holding only loopback, relays
//     127.0.0.1:relayPort there to the proxy's socket, and runs buildkitd
//     in it with the proxy in its environment (its pulls go through the
//     proxy too, which allows the mirrors);
//   - buildkitd runs the steps in its own network namespace (host mode),
//     where the relay is all there is, with BuildKit's predefined proxy
//     build arguments pointing at it.
const (
	// envNetnsChild, set by the dockerfile step, makes knit-builder the
	// command rootlesskit runs: its value is the proxy's socket.
	envNetnsChild = "KNIT_BUILDER_NETNS_CHILD"
	// relayPort is where RUN steps and buildkitd find the proxy.
	relayPort = "3128"
	// proxyStart bounds the wait for knit-build-proxy's socket.
	proxyStart = 30 * time.Second
)

// relayURL is the proxy as RUN steps and buildkitd see it.
var relayURL = "http://127.0.0.1:" + relayPort

// proxyVars are BuildKit's predefined proxy build arguments: every RUN
// step gets them without an ARG line, and they stay out of the cache key
// and the image's history. Both spellings, since tools read one or the
// other.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}

// isProxyArg reports whether a build argument names a proxy variable the
// step sets: the proxy's value wins, since a step reaches nothing else.
func isProxyArg(arg string) bool {
	name, _, _ := strings.Cut(arg, "=")
	for _, v := range proxyVars {
		if strings.EqualFold(name, v) {
			return true
		}
	}
	return false
}

// startProxy runs knit-build-proxy on socket with the hosts RUN steps may
// reach and the mirrors buildkitd pulls from; stop ends it.
func startProxy(ctx context.Context, o options, socket string, out io.Writer) (stop func(), err error) {
	_ = os.Remove(socket)
	args := []string{"--socket", socket}
	for _, h := range append(append([]string{}, o.allowHosts...), mirrorHosts(o.mirrors)...) {
		args = append(args, "--allow", h)
	}
	c := exec.Command(o.buildProxy, args...)
	logs := &prefixWriter{w: out, prefix: "proxy: "}
	c.Stdout, c.Stderr = logs, logs
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("start knit-build-proxy: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = c.Wait(); close(exited) }()
	stop = func() {
		_ = c.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
			<-exited
		}
	}
	if err := waitSocket(ctx, socket, proxyStart, exited); err != nil {
		stop()
		return nil, fmt.Errorf("knit-build-proxy: %w", err)
	}
	return stop, nil
}

// mirrorHosts are the mirrors' host[:port]s of HOST=MIRROR pairs.
func mirrorHosts(mirrors []string) []string {
	var out []string
	for _, m := range mirrors {
		if _, mirror, ok := strings.Cut(m, "="); ok {
			out = append(out, strings.SplitN(mirror, "/", 2)[0])
		}
	}
	return out
}

// waitSocket waits until a Unix socket accepts, the process behind it
// exits, or timeout passes.
func waitSocket(ctx context.Context, socket string, timeout time.Duration, exited <-chan struct{}) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if conn, err := net.Dial("unix", socket); err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited before it served (its output is above in the build's log)")
		case <-deadline.C:
			return fmt.Errorf("did not serve on %s within %s", socket, timeout)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// netnsChild is knit-builder as rootlesskit's command: a network
// namespace of loopback alone, the relay to the proxy's socket in it,
// and argv (buildkitd) run there with the proxy in its environment. It
// returns the exit code.
func netnsChild(socket string, argv []string, stderr io.Writer) int {
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "knit-builder: no command to run in the build's network namespace")
		return 2
	}
	// The namespace belongs to this thread; buildkitd, forked from it,
	// inherits it, and so do the sockets made on it.
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		fmt.Fprintln(stderr, "knit-builder: a network namespace for the build:", err)
		return 1
	}
	if err := loopbackUp(); err != nil {
		fmt.Fprintln(stderr, "knit-builder: loopback up in the build's network namespace:", err)
		return 1
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+relayPort)
	if err != nil {
		fmt.Fprintln(stderr, "knit-builder: the relay to the proxy:", err)
		return 1
	}
	go relay(l, socket)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), proxyEnv()...)
	cmd.Stdout, cmd.Stderr = os.Stdout, stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "knit-builder:", err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return 1
	}
	return 0
}

// proxyEnv points a program at the relay, for every destination.
func proxyEnv() []string {
	env := []string{"NO_PROXY=", "no_proxy="}
	for _, v := range proxyVars {
		env = append(env, v+"="+relayURL)
	}
	return env
}

// loopbackUp sets lo up in the current network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// relay forwards each connection accepted on l to the proxy's socket.
func relay(l net.Listener, socket string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			p, err := net.Dial("unix", socket)
			if err != nil {
				return
			}
			defer p.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(p, c); closeWrite(p); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, p); closeWrite(c); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}

// closeWrite half-closes a connection so the peer sees the end of a
// request body while the answer still flows.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// proxySocket is where knit-build-proxy listens: the step's own /tmp.
func proxySocket() string { return filepath.Join(os.TempDir(), "proxy.sock") }
