package baseimages

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/knitops/knit/internal/moduleroot"
)

// startRegistry serves go-containerregistry's registry on loopback until
// the test ends and returns its host:port.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// pulled reads ref's manifest and config back from the registry.
func pulled(t *testing.T, ref string) (*v1.Manifest, *v1.ConfigFile, v1.Hash) {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return m, cf, d
}

// A layout made here, as hack/bases writes one: a one-layer linux/amd64
// image with a Cmd.
func TestPushALayout(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	body := []byte("#!/bin/sh\necho hi\n")
	if err := tw.WriteHeader(&tar.Header{Name: "bin/hi", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "amd64",
		RootFS: v1.RootFS{Type: "layers"}, Config: v1.Config{Cmd: []string{"/bin/hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "hi")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"})); err != nil {
		t.Fatal(err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}

	ref := startRegistry(t) + "/library/hi:1"
	digest, err := Push(context.Background(), dir, ref)
	if err != nil {
		t.Fatal(err)
	}
	if digest != want.String() {
		t.Errorf("Push = %s, want %s", digest, want)
	}
	m, cf, got := pulled(t, ref)
	if got != want || len(m.Layers) != 1 || !reflect.DeepEqual(cf.Config.Cmd, []string{"/bin/hi"}) {
		t.Errorf("the registry serves %s with %d layers and %+v, want %s", got, len(m.Layers), cf.Config, want)
	}

	if _, err := Push(context.Background(), filepath.Join(t.TempDir(), "none"), ref); err == nil {
		t.Error("Push of a missing layout succeeded")
	}
	if err := p.AppendImage(empty.Image); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(context.Background(), dir, ref); err == nil || !strings.Contains(err.Error(), "holds 2 images") {
		t.Errorf("Push of a layout of two images = %v, want an error saying so", err)
	}
}

func TestDir(t *testing.T) {
	t.Setenv(EnvDir, t.TempDir())
	if _, err := Dir("python"); err == nil || !strings.Contains(err.Error(), "make base-images") {
		t.Errorf("Dir of an unbuilt base = %v, want an error naming make base-images", err)
	}
	built := t.TempDir()
	if err := os.MkdirAll(filepath.Join(built, "node"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(built, "node", "index.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvDir, built)
	if got, err := Dir("node"); err != nil || got != filepath.Join(built, "node") {
		t.Errorf("Dir(node) = %q, %v; want %s", got, err, filepath.Join(built, "node"))
	}

	// Without the variable: knit's module root, above this package.
	t.Setenv(EnvDir, "")
	root, err := moduleroot.Dir()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if filepath.Join(root, "internal", "baseimages") != wd {
		t.Errorf("moduleRoot = %s, from %s", root, wd)
	}
}

func TestLoopback(t *testing.T) {
	for ref, want := range map[string]bool{
		"127.0.0.1:5000/a/b:c": true, "localhost:5000/a": true, "[::1]:5000/a": true,
		"registry.example/a": false, "10.0.0.1:5000/a": false, "python:3": false,
	} {
		if got := loopback(ref); got != want {
			t.Errorf("loopback(%q) = %v, want %v", ref, got, want)
		}
	}
}
