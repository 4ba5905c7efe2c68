package runtime

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/knitops/knit/local/podlogs"
	"github.com/knitops/knit/local/view"
)

// lockedBuffer is a bytes.Buffer safe for a process's output goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A container's view as a container runtime makes it, run as another
// user: its own /dev without a console, /proc's settings read-only, the
// pod's hostname, its credentials, and the image's binary at /ko-app,
// bound from a directory (0700, as /root) its user cannot reach. An exec
// probe runs in that view, as that user. No control plane needed.
func TestContainerViewAsAnotherUser(t *testing.T) {
	if err := view.Supported(); err != nil {
		if os.Geteuid() == 0 || !errors.Is(err, view.ErrUnsupported) {
			t.Fatalf("mount namespaces: %v", err)
		}
		return // not root: containers get no view, and another user is refused (TestContainerCredential)
	}
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(private, "app")
	script := `#!/bin/sh
if [ "$1" = wait ]; then exec sleep 60; fi
echo "ids $(id -u) $(id -g) $(id -G)"
echo "hostname $(hostname)"
echo "dev $(cd /dev && ls -A | tr '\n' ' ')"
echo "ptmx $(readlink /dev/ptmx) fd $(readlink /dev/fd) stdin $(readlink /dev/stdin)"
test -e /dev/console || echo "no console"
echo x > /dev/null && head -c 4 /dev/zero | wc -c | sed 's/^/zero /'
touch /dev/shm/mine && touch /tmp/knit-view-test-$$ && rm /tmp/knit-view-test-$$ && echo "shm and tmp writable"
grep ' /proc/sys ' /proc/mounts | cut -d' ' -f1-3 | sed 's/^/sysctl /'
grep ' /proc/sys ' /proc/mounts | cut -d' ' -f4 | tr ',' '\n' | grep -x ro | sed 's/^/sysctl /'
echo "argv0 $0"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cred := &syscall.Credential{Uid: 2020, Gid: 2020, Groups: []uint32{3000}}
	if why := unreachable(bin, cred, 0o1, statOwner); why == "" {
		t.Fatalf("%s is reachable by uid 2020: the test needs it not to be", bin)
	}
	plan := &view.Plan{
		Scratch: filepath.Join(t.TempDir(), "..mounts"), System: true, Hostname: "hello-00001-deployment-abc-1",
		Mounts: []view.Mount{{Volume: "image binary", Source: bin, Target: "/ko-app/app", ReadOnly: true}},
	}
	run := func(args ...string) (*process, *lockedBuffer) {
		t.Helper()
		out := &lockedBuffer{}
		p, err := startProcess(append([]string{"/ko-app/app"}, args...), []string{"PATH=/usr/bin:/bin"}, "/",
			output{log: podlogs.NewFile(io.Discard), stdout: out, stderr: out}, nil, nil, plan, cred)
		if err != nil {
			t.Fatal(err)
		}
		return p, out
	}
	p, out := run()
	<-p.done
	want := []string{
		"ids 2020 2020 2020 3000",
		"hostname hello-00001-deployment-abc-1",
		"dev fd full null ptmx pts random shm stderr stdin stdout tty urandom zero ",
		"ptmx pts/ptmx fd /proc/self/fd stdin /proc/self/fd/0",
		"no console",
		"zero 4",
		"shm and tmp writable",
		"sysctl proc /proc/sys proc",
		"sysctl ro",
		"argv0 /ko-app/app",
	}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("in the container:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	if host, _ := os.Hostname(); host == "hello-00001-deployment-abc-1" {
		t.Error("the container's hostname leaked to this machine")
	}

	// An exec probe of the running container: inside its view, as its user.
	p, _ = run("wait")
	defer p.stop(0, nil)
	pr := newContainerExec(nil, []string{"PATH=/usr/bin:/bin"}, "/")
	pr.cred, pr.inside = cred, p.pid()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := `test "$(id -u)" = 2020 && test -x /ko-app/app && test "$(hostname)" = hello-00001-deployment-abc-1 && test ! -e /dev/console && test -e /dev/shm/mine || { id; hostname; ls /dev /ko-app; exit 1; }`
	if err := pr.run(ctx, []string{"/bin/sh", "-c", check}); err == nil {
		t.Error("the probe saw /dev/shm/mine of the container's earlier run: each start must get a /dev of its own")
	}
	check = strings.Replace(check, "&& test -e /dev/shm/mine ", "", 1)
	if err := pr.run(ctx, []string{"/bin/sh", "-c", "touch /dev/shm/probe && " + check}); err != nil {
		t.Errorf("exec probe in the container's view: %v", err)
	}
	if _, err := os.Stat("/dev/shm/probe"); err == nil {
		os.Remove("/dev/shm/probe")
		t.Error("the probe's write to /dev/shm reached this machine's")
	}
}
