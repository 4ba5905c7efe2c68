package engine

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// probeSource is the program run inside the test containers. It reports
// what the container looks like from inside as key=value lines; "wait"
// blocks until SIGTERM (it is pid 1 in its namespace, so it must handle the
// signal for it to have any effect) and "echo" prints its arguments and
// identity, for exec.
const probeSource = `package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "wait" {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		fmt.Println("ready")
		fmt.Println("signal=" + (<-c).String())
		os.Exit(3)
	}
	if len(os.Args) > 1 && os.Args[1] == "echo" {
		fmt.Println("echo=" + strings.Join(os.Args[2:], " "))
	}
	report()
}

func report() {
	groups, _ := os.Getgroups()
	fmt.Printf("uid=%d\ngid=%d\ngroups=%v\n", os.Getuid(), os.Getgid(), groups)
	wd, _ := os.Getwd()
	host, _ := os.Hostname()
	fmt.Printf("cwd=%s\nhostname=%s\nenv=%s\n", wd, host, strings.Join(os.Environ(), ","))
	if f, err := os.Open("/proc/self/status"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ":")
			switch k {
			case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp":
				fmt.Printf("%s=%s\n", k, strings.TrimSpace(v))
			}
		}
		f.Close()
	}
	if p := os.Getenv("PROBE_READ"); p != "" {
		b, err := os.ReadFile(p)
		fmt.Printf("read=%s\n", result(strings.TrimSpace(string(b)), err))
	}
	if p := os.Getenv("PROBE_ABSENT"); p != "" {
		_, err := os.Stat(p)
		fmt.Printf("absent=%s\n", result("visible", err))
	}
	err := os.WriteFile("/probe-write", []byte("x"), 0o644)
	fmt.Printf("write_root=%s\n", result("ok", err))
	err = os.WriteFile("/dev/shm/probe-write", []byte("x"), 0o644)
	fmt.Printf("write_shm=%s\n", result("ok", err))
	f, err := os.OpenFile("/proc/sys/kernel/hostname", os.O_WRONLY, 0)
	if err == nil {
		f.Close()
	}
	fmt.Printf("write_proc_sys=%s\n", result("ok", err))
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/ptmx"} {
		fmt.Printf("dev:%s=%s\n", d, device(d))
	}
}

func device(path string) string {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return result("", err)
	}
	defer f.Close()
	if path == "/dev/ptmx" {
		return "ok"
	}
	if _, err := f.Read(make([]byte, 8)); err != nil && path != "/dev/null" {
		return result("", err)
	}
	_, err = f.Write([]byte("x"))
	if path == "/dev/full" {
		if errors.Is(err, syscall.ENOSPC) {
			return "ok"
		}
		return fmt.Sprintf("write: %v", err)
	}
	return result("ok", err)
}

func result(ok string, err error) string {
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "error: " + err.Error()
	}
	return ok
}
`

var probe struct {
	once sync.Once
	path string
	err  error
}

// probeBinary builds probeSource once per test binary, statically, so it
// runs in a rootfs that holds nothing else.
func probeBinary(t *testing.T) string {
	t.Helper()
	probe.once.Do(func() {
		dir, err := os.MkdirTemp("", "knit-engine-probe-")
		if err != nil {
			probe.err = err
			return
		}
		probe.path = filepath.Join(dir, "probe")
		for name, data := range map[string]string{"go.mod": "module probe\n\ngo 1.22\n", "main.go": probeSource} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				probe.err = err
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goTool(), "build", "-o", probe.path, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			probe.err = fmt.Errorf("build probe: %v\n%s", err, out)
		}
	})
	if probe.err != nil {
		t.Fatal(probe.err)
	}
	return probe.path
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "/usr/local/go/bin/go"
}

func TestMain(m *testing.M) {
	code := m.Run()
	if probe.path != "" {
		os.RemoveAll(filepath.Dir(probe.path))
	}
	os.Exit(code)
}

// needRunc skips unless the test can really run containers.
func needRunc(t *testing.T) Runc {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: runc creates namespaces and cgroups")
	}
	p, err := FindRunc()
	if err != nil {
		t.Fatalf("root, but no runc to run containers with (make host-packages installs it): %v", err)
	}
	return Runc{Path: p, Root: filepath.Join(t.TempDir(), "runc-state")}
}

func randomID(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "knit-engine-test-" + hex.EncodeToString(b)
}

// testBundle makes a bundle whose rootfs holds just the probe as /app and
// the directories runc mounts on, writes the spec of c there and registers
// a cleanup that deletes the container. It returns the bundle and id.
func testBundle(t *testing.T, r Runc, c Config) (string, string) {
	t.Helper()
	bin := probeBinary(t)
	bundle := filepath.Join(t.TempDir(), "bundle")
	rootfs := filepath.Join(bundle, "rootfs")
	for _, d := range []string{"proc", "dev", "sys", "etc"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// t.TempDir is 0700; the container's root must be searchable by
	// non-root users.
	if err := os.Chmod(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "app"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	id := randomID(t)
	if c.CgroupsPath == "" {
		c.CgroupsPath = id
	}
	s, err := Spec("rootfs", c)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteBundle(bundle, s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.Delete(ctx, id); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return bundle, id
}

func parseReport(out string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(out) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			m[k] = v
		}
	}
	return m
}

func capMask(caps []string) string {
	var bits uint64
	for _, c := range caps {
		bits |= 1 << uint(slices.Index(knownCaps, c))
	}
	return fmt.Sprintf("%016x", bits)
}

func runContainer(t *testing.T, r Runc, c Config) map[string]string {
	t.Helper()
	bundle, id := testBundle(t, r, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := r.RunArgv(id, bundle)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%q: %v\nstdout:\n%s\nstderr:\n%s", argv, err, &stdout, &stderr)
	}
	t.Logf("container output:\n%s", &stdout)
	return parseReport(stdout.String())
}

func TestRuncRun(t *testing.T) {
	r := needRunc(t)
	host := t.TempDir()
	data := filepath.Join(host, "data.txt")
	if err := os.WriteFile(data, []byte("hello from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(host, "secret")
	if err := os.WriteFile(secret, []byte("no"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"PROBE_READ=/etc/probe/data.txt", "PROBE_ABSENT=" + secret}
	mounts := []Mount{{Source: data, Destination: "/etc/probe/data.txt", ReadOnly: true}}
	allOK := map[string]string{
		"read":   "hello from the host",
		"absent": "error: no such file or directory",
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/ptmx"} {
		allOK["dev:"+d] = "ok"
	}
	bnd := capMask(without(DefaultCaps(), "CAP_NET_RAW"))
	tests := []struct {
		name string
		cfg  Config
		want map[string]string
	}{
		{
			name: "root read-only drop NET_RAW",
			cfg: Config{
				Args: []string{"/app"}, Env: env, Mounts: mounts, Hostname: "probe-0",
				ReadOnlyRoot: true, CapDrop: []string{"NET_RAW"},
			},
			want: map[string]string{
				"uid": "0", "gid": "0", "cwd": "/", "hostname": "probe-0",
				"CapBnd": bnd, "CapEff": bnd, "CapPrm": bnd, "CapInh": capMask(nil), "CapAmb": capMask(nil),
				"NoNewPrivs": "0", "Seccomp": "2",
				"write_root": "error: read-only file system", "write_shm": "ok",
				"write_proc_sys": "error: read-only file system",
			},
		},
		{
			name: "user and groups no new privileges",
			cfg: Config{
				Args: []string{"/app"}, Env: env, Mounts: mounts, Cwd: "/etc",
				UID: 1000, GID: 1001, AdditionalGIDs: []uint32{2000, 2001}, NoNewPrivileges: true,
			},
			want: map[string]string{
				"uid": "1000", "gid": "1001", "groups": "[2000 2001]", "cwd": "/etc",
				// A non-root user keeps the bounding set but, without
				// ambient capabilities, has no effective ones.
				"CapBnd": capMask(DefaultCaps()), "CapEff": capMask(nil), "NoNewPrivs": "1",
				"write_root": "error: permission denied",
			},
		},
		{
			name: "drop ALL add NET_BIND_SERVICE unconfined",
			cfg: Config{
				Args: []string{"/app"}, Env: env, Mounts: mounts,
				CapDrop: []string{"ALL"}, CapAdd: []string{"NET_BIND_SERVICE"}, Seccomp: SeccompUnconfined,
			},
			want: map[string]string{
				"CapBnd": capMask([]string{"CAP_NET_BIND_SERVICE"}), "CapEff": capMask([]string{"CAP_NET_BIND_SERVICE"}),
				"Seccomp": "0", "write_root": "ok",
			},
		},
		{
			name: "privileged",
			cfg:  Config{Args: []string{"/app"}, Env: env, Mounts: mounts, Privileged: true},
			want: map[string]string{
				"CapBnd": capMask(CurrentCaps()), "CapEff": capMask(CurrentCaps()), "Seccomp": "0", "write_proc_sys": "ok",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runContainer(t, r, tt.cfg)
			for k, v := range allOK {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// TestRuncExecKill runs a container that waits for SIGTERM, execs the probe
// inside it, then stops it with Kill.
func TestRuncExecKill(t *testing.T) {
	r := needRunc(t)
	bundle, id := testBundle(t, r, Config{
		Args: []string{"/app", "wait"}, Env: []string{"FROM_SPEC=1"}, Cwd: "/etc",
		UID: 1000, GID: 1000, Hostname: "waiter",
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	argv := r.RunArgv(id, bundle)
	run := exec.CommandContext(ctx, argv[0], argv[1:]...)
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	run.Stderr = &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		run.Wait()
		t.Fatalf("container did not start: %q %v\nstderr:\n%s", lines.Text(), lines.Err(), &stderr)
	}

	argv = r.ExecArgv(id, []string{"/app", "echo", "-n", "--", "from exec"})
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, out)
	}
	got := parseReport(string(out))
	for k, v := range map[string]string{
		"echo": "-n -- from exec", "uid": "1000", "gid": "1000", "cwd": "/etc", "hostname": "waiter", "Seccomp": "2",
	} {
		if got[k] != v {
			t.Errorf("exec %s = %q, want %q\n%s", k, got[k], v, out)
		}
	}
	if !strings.Contains(got["env"], "FROM_SPEC=1") {
		t.Errorf("exec env %q lacks the container's environment", got["env"])
	}

	if err := r.Kill(ctx, id, syscall.SIGTERM, false); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	err = run.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("runc run: %v, want exit status 3 from the container\nstderr:\n%s", err, &stderr)
	}
	if !strings.Contains(string(rest), "signal=terminated") {
		t.Errorf("container output after kill: %q", rest)
	}

	// The container has stopped and is kept (--keep) until deleted.
	if err := r.Kill(ctx, id, syscall.SIGTERM, false); !errors.Is(err, ErrNotRunning) {
		t.Errorf("kill after exit: %v, want ErrNotRunning", err)
	}
	if err := r.Delete(ctx, id); err != nil {
		t.Errorf("delete after exit: %v", err)
	}
	if err := r.Kill(ctx, id, syscall.SIGTERM, false); !errors.Is(err, ErrNotExist) {
		t.Errorf("kill after delete: %v, want ErrNotExist", err)
	}
}

// TestRuncStop stops a running container with Delete and with Kill --all,
// and checks that deleting an unknown container is fine.
func TestRuncStop(t *testing.T) {
	r := needRunc(t)
	tests := []struct {
		name string
		stop func(ctx context.Context, id string) error
	}{
		{"delete", func(ctx context.Context, id string) error { return r.Delete(ctx, id) }},
		{"kill all", func(ctx context.Context, id string) error { return r.Kill(ctx, id, syscall.SIGKILL, true) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bundle, id := testBundle(t, r, Config{Args: []string{"/app", "wait"}})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			argv := r.RunArgv(id, bundle)
			run := exec.CommandContext(ctx, argv[0], argv[1:]...)
			stdout, err := run.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := run.Start(); err != nil {
				t.Fatal(err)
			}
			if lines := bufio.NewScanner(stdout); !lines.Scan() || lines.Text() != "ready" {
				run.Wait()
				t.Fatalf("container did not start: %q", lines.Text())
			}
			if err := tt.stop(ctx, id); err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, stdout)
			err = run.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 128+int(syscall.SIGKILL) {
				t.Errorf("runc run: %v, want exit status %d", err, 128+int(syscall.SIGKILL))
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Delete(ctx, "knit-engine-test-never-created"); err != nil {
		t.Errorf("delete unknown: %v", err)
	}
	if err := r.Kill(ctx, "knit-engine-test-never-created", syscall.SIGTERM, false); !errors.Is(err, ErrNotExist) {
		t.Errorf("kill unknown: %v, want ErrNotExist", err)
	}
}

func TestWriteBundle(t *testing.T) {
	bundle := filepath.Join(t.TempDir(), "b")
	s, err := Spec("rootfs", Config{Args: []string{"/app"}, Env: []string{"SECRET=x"}})
	if err != nil {
		t.Fatal(err)
	}
	var r Runc
	if err := r.WriteBundle(bundle, s); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteBundle(bundle, s); err != nil { // rewrite over an existing one
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(bundle, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("config.json mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, err := os.Stat(filepath.Join(bundle, "rootfs")); err != nil || !fi.IsDir() {
		t.Errorf("rootfs: %v", err)
	}
	entries, _ := os.ReadDir(bundle)
	if len(entries) != 2 {
		t.Errorf("bundle holds %d entries, want config.json and rootfs", len(entries))
	}
	b, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back specs.Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Process.Capabilities == nil || back.Root.Path != "rootfs" {
		t.Errorf("round trip lost data: %s", b)
	}
}

func TestArgv(t *testing.T) {
	r := Runc{Path: "/usr/sbin/runc", Root: "/state/runc"}
	tests := []struct {
		got, want []string
	}{
		{r.RunArgv("c1", "/b"), []string{"/usr/sbin/runc", "--root", "/state/runc", "run", "--bundle", "/b", "--no-new-keyring", "--keep", "c1"}},
		{r.ExecArgv("c1", []string{"sh", "-c", "x"}), []string{"/usr/sbin/runc", "--root", "/state/runc", "exec", "--", "c1", "sh", "-c", "x"}},
		{Runc{}.RunArgv("c1", "/b"), []string{"runc", "run", "--bundle", "/b", "--no-new-keyring", "--keep", "c1"}},
	}
	for _, tt := range tests {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	// The argv slices must not share a backing array with each other.
	a, b := r.RunArgv("a", "/a"), r.RunArgv("b", "/b")
	if a[len(a)-1] != "a" || b[len(b)-1] != "b" {
		t.Error("argv slices alias")
	}
}
