package main

import (
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func testBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hello")
	if err := os.WriteFile(bin, []byte("static program"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestPush pushes to an in-memory registry and checks that the printed
// <ref>@<digest> is what the registry serves.
func TestPush(t *testing.T) {
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	ref := strings.TrimPrefix(reg.URL, "http://") + "/knit/hello:v1"

	var stdout bytes.Buffer
	err := run([]string{"-ref", ref, "-file", testBinary(t) + ":/hello", "-entrypoint", "/hello", "-push", "-insecure", "-ca-bundle", ""}, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	printed, digest, ok := strings.Cut(strings.TrimSpace(stdout.String()), "@")
	if !ok || printed != ref {
		t.Fatalf("printed %q, want %s@<digest>", stdout.String(), ref)
	}
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(tag)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest.String() != digest {
		t.Errorf("registry serves %s, printed %s", desc.Digest, digest)
	}
}

// TestTarballOutput writes a tarball and checks the printed image ID.
func TestTarballOutput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "images", "hello.tar")
	var stdout bytes.Buffer
	err := run([]string{"-ref", "knit.local/examples/hello:latest", "-file", testBinary(t), "-entrypoint", "/hello", "-out", out}, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("knit.local/examples/hello:latest")
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	id, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	if want := "knit.local/examples/hello:latest id " + id.String() + " -> " + out + "\n"; stdout.String() != want {
		t.Errorf("printed %q, want %q", stdout.String(), want)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Entrypoint; len(got) != 1 || got[0] != "/hello" {
		t.Errorf("entrypoint %q, want [/hello] (a relative -file lands at /<base name>)", got)
	}
}

func TestUsageErrors(t *testing.T) {
	bin := testBinary(t)
	for name, args := range map[string][]string{
		"no ref":          {"-file", bin, "-entrypoint", "/hello", "-out", "x.tar"},
		"no entrypoint":   {"-ref", "knit.local/a:b", "-file", bin, "-out", "x.tar"},
		"out and push":    {"-ref", "knit.local/a:b", "-entrypoint", "/a", "-out", "x.tar", "-push"},
		"neither":         {"-ref", "knit.local/a:b", "-entrypoint", "/a"},
		"bad reference":   {"-ref", "Not A Ref", "-entrypoint", "/a", "-out", "x.tar"},
		"missing file":    {"-ref", "knit.local/a:b", "-file", "/does/not/exist", "-entrypoint", "/a", "-out", filepath.Join(t.TempDir(), "x.tar")},
		"extra arguments": {"-ref", "knit.local/a:b", "-entrypoint", "/a", "-out", "x.tar", "extra"},
	} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestBase puts the layer on the one image of an OCI layout: the base's
// layers stay, in order, beneath the new one.
func TestBase(t *testing.T) {
	base, err := random.Image(64, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "base")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(base); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "img.tar")
	var stdout bytes.Buffer
	if err := run([]string{"-ref", "knit.local/b:dev", "-base", dir, "-file", testBinary(t) + ":/hello", "-entrypoint", "/hello", "-out", out, "-ca-bundle", ""}, &stdout); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	baseLayers, _ := base.Layers()
	if len(layers) != 3 {
		t.Fatalf("%d layers, want the base's 2 and one more", len(layers))
	}
	for i, l := range baseLayers {
		want, _ := l.DiffID()
		if got, _ := layers[i].DiffID(); got != want {
			t.Errorf("layer %d is %s, want the base's %s", i, got, want)
		}
	}
	if err := run([]string{"-ref", "knit.local/b:dev", "-base", t.TempDir(), "-entrypoint", "/hello", "-out", out}, &stdout); err == nil {
		t.Error("an empty directory was taken as a base")
	}
}
