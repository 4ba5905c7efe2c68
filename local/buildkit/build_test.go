package buildkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// newDaemon is a Daemon over the repository's bin directory (make tools
// links buildkitd, buildctl and registry there), with the options set
// changes. It needs root: BuildKit's worker is runc and its steps get
// network namespaces.
func newDaemon(t *testing.T, set ...func(*Options)) *Daemon {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("BuildKit's OCI worker needs root on Linux (runc, overlay mounts, network namespaces)")
	}
	opts := Options{Dir: filepath.Join(t.TempDir(), "buildkit"), BinDir: filepath.Join("..", "..", "bin"), Log: testr.New(t)}
	for _, f := range set {
		f(&opts)
	}
	d := New(opts)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// context writes a build context: busybox as the shell of a scratch
// image, and files.
func buildContext(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	busybox, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Fatalf("busybox-static (make host-packages): %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "busybox"), busybox, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, body := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const busyboxBase = "FROM scratch\nCOPY busybox /bin/busybox\nSHELL [\"/bin/busybox\", \"sh\", \"-c\"]\n"

// reachHTTP defines the shell function `reach HOST PORT`, true when an
// HTTP server answers there. It speaks HTTP/1.0, which the server ends by
// closing, because Debian's busybox nc has no -z to connect and leave.
const reachHTTP = "reach() { /bin/busybox printf 'GET / HTTP/1.0\\r\\n\\r\\n' | /bin/busybox timeout 5 /bin/busybox nc -w 2 $1 $2 | /bin/busybox grep -q '^HTTP/'; }"

func TestBuildPushesByDigestAndReusesItsCache(t *testing.T) {
	d := newDaemon(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := buildContext(t, map[string]string{
		"Dockerfile": busyboxBase + "ARG GREETING\nRUN /bin/busybox mkdir /out && /bin/busybox echo \"$GREETING\" > /out/greeting\nCOPY app.txt /out/app.txt\n",
		"app.txt":    "one\n",
	})
	spec := Spec{Context: dir, File: "Dockerfile", Args: map[string]string{"GREETING": "hello"}, Repository: "default/repo/web", Tag: "k1"}
	var log strings.Builder
	first, err := d.Build(ctx, spec, &log, nil)
	if err != nil {
		t.Fatalf("build: %v\n%s", err, log.String())
	}
	registry, _ := d.Registry(ctx)
	if !strings.HasPrefix(first.Image, registry+"/default/repo/web@sha256:") {
		t.Fatalf("image %q, want one of %s/default/repo/web by digest", first.Image, registry)
	}
	ref, err := name.ParseReference(first.Image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Image(ref, remote.WithContext(ctx)); err != nil {
		t.Fatalf("the pushed image cannot be pulled by digest: %v", err)
	}
	if c, all := first.Cached(); c != 0 || all != 3 {
		t.Errorf("first build: %d of %d steps cached, want 0 of 3\n%s", c, all, log.String())
	}

	// A changed file: the steps before its COPY come from the cache.
	if err := os.WriteFile(filepath.Join(dir, "app.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	var ended []Step
	second, err := d.Build(ctx, Spec{Context: dir, File: "Dockerfile", Args: spec.Args, Repository: spec.Repository, Tag: "k2"}, &log, func(s Step) { ended = append(ended, s) })
	if err != nil {
		t.Fatalf("second build: %v\n%s", err, log.String())
	}
	if second.Image == first.Image {
		t.Errorf("a changed file built the same image %s", second.Image)
	}
	if c, all := second.Cached(); c != 2 || all != 3 {
		t.Errorf("second build: %d of %d steps cached, want the COPY busybox and the RUN (2 of 3)\n%s", c, all, log.String())
	}
	if len(ended) == 0 {
		t.Error("no step was reported as it ended")
	}
}

// A RUN step has its own loopback and nothing else: not this machine's
// loopback services (knit dev's API server, Git server, registry), not
// its network.
func TestRunStepsReachNoNetwork(t *testing.T) {
	d := newDaemon(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "reached") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	registry, err := d.Registry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, regPort, _ := net.SplitHostPort(registry)
	dir := buildContext(t, map[string]string{"Dockerfile": busyboxBase + fmt.Sprintf(
		"RUN %s; /bin/busybox ip -o link | /bin/busybox grep -v ' lo:' && exit 1; "+
			"reach 127.0.0.1 %s && exit 2; reach 127.0.0.1 %s && exit 3; exit 0\n", reachHTTP, port, regPort)})
	var log strings.Builder
	if _, err := d.Build(ctx, Spec{Context: dir, File: "Dockerfile", Repository: "default/repo/net", Tag: "t"}, &log, nil); err != nil {
		t.Fatalf("a RUN step reached something it must not (exit 1: an interface besides lo, 2: this machine's loopback, 3: the registry): %v\n%s", err, log.String())
	}
}

func TestFailedStepSaysWhy(t *testing.T) {
	d := newDaemon(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := buildContext(t, map[string]string{"docker/Dockerfile.prod": busyboxBase +
		"FROM scratch AS unused\nFROM 0 AS final\n",
		"Dockerfile": busyboxBase + "RUN /bin/busybox echo compiling; /bin/busybox echo 'error: no such module' >&2; exit 3\n"})
	var log strings.Builder
	_, err := d.Build(ctx, Spec{Context: dir, File: "Dockerfile", Repository: "default/repo/bad", Tag: "t"}, &log, nil)
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "error: no such module") || !strings.Contains(err.Error(), "exit code: 3") {
		t.Fatalf("err = %v, want ErrFailed quoting the step's output and exit code\n%s", err, log.String())
	}
	// A Dockerfile named by a path and a stage that does not exist.
	_, err = d.Build(ctx, Spec{Context: dir, File: "docker/Dockerfile.prod", Target: "missing", Repository: "default/repo/bad", Tag: "t2"}, &log, nil)
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err = %v, want ErrFailed naming the missing target", err)
	}
}
