package main

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// A failed build quotes the step BuildKit reported an ERROR for: its
// last lines of output, the ERROR, and buildctl's closing error, not the
// other steps' noise.
func TestFailedStepQuotesTheStep(t *testing.T) {
	lines := strings.Split(`#5 [2/4] WORKDIR /app
#5 CACHED
#6 [3/4] COPY app.py .
#6 DONE 0.0s
#7 [4/4] RUN python3 -c 'import knit_missing_module'
#7 0.112 Traceback (most recent call last):
#7 0.112   File "<string>", line 1, in <module>
#7 0.112 ModuleNotFoundError: No module named 'knit_missing_module'
#7 ERROR: process "/bin/sh -c python3 -c 'import knit_missing_module'" did not complete successfully: exit code: 1
------
 > [4/4] RUN python3 -c 'import knit_missing_module':
------
Dockerfile:5
error: failed to solve: process "/bin/sh -c python3 -c 'import knit_missing_module'" did not complete successfully: exit code: 1`, "\n")
	got := failedStep(lines)
	for _, want := range []string{"No module named 'knit_missing_module'", "ERROR: process", "error: failed to solve"} {
		if !strings.Contains(got, want) {
			t.Errorf("failedStep = %q, want it to say %q", got, want)
		}
	}
	if strings.Contains(got, "WORKDIR") || strings.Contains(got, "#7") {
		t.Errorf("failedStep = %q, want the failing step's own lines without BuildKit's prefixes", got)
	}
	if got := failedStep([]string{"a", "error: dial unix: no such file"}); !strings.Contains(got, "no such file") {
		t.Errorf("failedStep without a step = %q, want the last lines", got)
	}
}

// buildkitd runs rootless without a process sandbox, its steps in a
// loopback-only network namespace, with the operator's mirrors, spoken to
// in plain HTTP only when the registry is insecure.
func TestBuildkitdConfig(t *testing.T) {
	got := buildkitdConfig("/cache/buildkit", "/tmp/b.sock", "/tmp/cni.json", "/usr/lib/cni", []string{"docker.io=10.0.0.2:5000", "ghcr.io=m.example"}, true, false)
	for _, want := range []string{`root = "/cache/buildkit"`, `"unix:///tmp/b.sock"`, "rootless = true", "noProcessSandbox = true",
		`networkMode = "cni"`, `cniConfigPath = "/tmp/cni.json"`, "[registry.\"docker.io\"]\n  mirrors = [\"10.0.0.2:5000\"]",
		"[registry.\"10.0.0.2:5000\"]\n  http = true", "[worker.containerd]\n  enabled = false"} {
		if !strings.Contains(got, want) {
			t.Errorf("buildkitd.toml lacks %q:\n%s", want, got)
		}
	}
	if secure := buildkitdConfig("/r", "/s", "/c", "/d", []string{"docker.io=m.example"}, false, false); strings.Contains(secure, "http = true") {
		t.Errorf("a secure mirror is spoken to in plain HTTP:\n%s", secure)
	}
}

// What the repository says reaches buildctl as values of its own flags.
func TestBuildctlArgs(t *testing.T) {
	o := options{contextDir: "web", dockerfile: "docker/Dockerfile.prod", target: "runtime", platform: "linux/amd64",
		buildArgs: list{"A=1", "B=--output=/etc"}}
	args := strings.Join(buildctlArgs("/tmp/s", "/workspace/src/web", o, "/workspace/image"), " ")
	for _, want := range []string{"--local context=/workspace/src/web", "--local dockerfile=/workspace/src/web/docker",
		"--opt filename=Dockerfile.prod", "--opt target=runtime", "--opt build-arg:A=1", "--opt build-arg:B=--output=/etc",
		"--output type=oci,dest=/workspace/image,tar=false"} {
		if !strings.Contains(args, want) {
			t.Errorf("buildctl %s lacks %q", args, want)
		}
	}
}

func TestValidateDockerfile(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    options
		ok   bool
	}{
		{"plain", options{contextDir: "web", dockerfile: "Dockerfile"}, true},
		{"root", options{contextDir: ".", dockerfile: "Dockerfile"}, true},
		{"context outside", options{contextDir: "../x", dockerfile: "Dockerfile"}, false},
		{"absolute Dockerfile", options{contextDir: "web", dockerfile: "/etc/passwd"}, false},
		{"flag-like stage", options{contextDir: "web", dockerfile: "Dockerfile", target: "-x"}, false},
		{"argument without =", options{contextDir: "web", dockerfile: "Dockerfile", buildArgs: list{"A"}}, false},
		{"mirror without =", options{contextDir: "web", dockerfile: "Dockerfile", mirrors: list{"docker.io"}}, false},
	} {
		if err := tc.o.validateDockerfile(); (err == nil) != tc.ok {
			t.Errorf("%s: validateDockerfile = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// The push step sends the layout the BuildKit step left, by digest; a
// layout holding a symlink (which could lead to the push container's
// registry credentials) is refused before anything is pushed.
func TestPushLayout(t *testing.T) {
	reg := newRegistry(t)
	ws := t.TempDir()
	img, err := random.Image(256, 2)
	if err != nil {
		t.Fatal(err)
	}
	p, err := layout.Write(filepath.Join(ws, layoutName), empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	o := options{workspace: ws, image: reg + "/default/shop/web", tag: "k", contextDir: "web", insecure: true}
	got, err := pushLayout(context.Background(), o, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	if got != reg+"/default/shop/web@"+digest.String() {
		t.Errorf("pushLayout = %s, want the image by digest %s", got, digest)
	}
	ref, _ := name.ParseReference(got, name.Insecure)
	if _, err := remote.Head(ref); err != nil {
		t.Errorf("the registry lacks %s: %v", got, err)
	}

	secret := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(secret, []byte(`{"auths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	blobs := filepath.Join(ws, layoutName, "blobs", "sha256")
	entries, _ := os.ReadDir(blobs)
	victim := filepath.Join(blobs, entries[0].Name())
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, victim); err != nil {
		t.Fatal(err)
	}
	o.tag = "k2"
	if _, err := pushLayout(context.Background(), o, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("pushLayout of a layout with a symlink = %v, want it refused", err)
	}
}

// With allowed hosts, steps share buildkitd's own network namespace (no
// CNI), get the relay as their proxy whatever the repository says, and
// buildkitd runs under this binary, which makes that namespace.
func TestEgressMode(t *testing.T) {
	cfg := buildkitdConfig("/r", "/s", "/c.json", "/cni", nil, false, true)
	if !strings.Contains(cfg, `networkMode = "host"`) || strings.Contains(cfg, "cniConfigPath") {
		t.Errorf("buildkitd.toml with allowed hosts:\n%s", cfg)
	}
	o := options{contextDir: "web", dockerfile: "Dockerfile", platform: "linux/amd64", allowHosts: list{"pypi.org"}, buildkitd: "buildkitd",
		buildArgs: list{"A=1", "https_proxy=http://attacker.example:3128", "Http_Proxy=x"}}
	args := strings.Join(buildctlArgs("/s", "/w/web", o, "/w/image"), " ")
	for _, want := range []string{"build-arg:A=1", "build-arg:HTTP_PROXY=" + relayURL, "build-arg:https_proxy=" + relayURL} {
		if !strings.Contains(args, want) {
			t.Errorf("buildctl %s lacks %q", args, want)
		}
	}
	if strings.Contains(args, "attacker.example") || strings.Contains(args, "Http_Proxy=x") {
		t.Errorf("a repository's own proxy argument reached buildctl: %s", args)
	}
	ra := rootlesskitArgs(o, "/tmp/b.toml")
	if self, _ := os.Executable(); !slices.Contains(ra, self) || ra[len(ra)-3] != "buildkitd" {
		t.Errorf("rootlesskit %v: want this binary before buildkitd", ra)
	}
	o.allowHosts = nil
	if ra := rootlesskitArgs(o, "/tmp/b.toml"); ra[len(ra)-3] != "buildkitd" || slices.ContainsFunc(ra, func(a string) bool { return strings.HasSuffix(a, ".test") }) {
		t.Errorf("rootlesskit %v without allowed hosts: want buildkitd alone", ra)
	}
	if got := mirrorHosts([]string{"docker.io=10.0.0.2:5000", "ghcr.io=mirror.example/ghcr"}); !slices.Equal(got, []string{"10.0.0.2:5000", "mirror.example"}) {
		t.Errorf("mirrorHosts = %v", got)
	}
}

// The relay carries a request and its answer between loopback and the
// proxy's Unix socket, both ways, each side seeing the other's end.
func TestRelay(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "p.sock")
	ul, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	go func() {
		c, err := ul.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c) // until the relay half-closes
		_, _ = c.Write(append([]byte("got "), b...))
	}()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go relay(l, socket)
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte("hello"))
	closeWrite(c)
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "got hello" {
		t.Errorf("through the relay: %q, %v", b, err)
	}
}
