package baseimages

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func TestPushALayout(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "layout")
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"})); err != nil {
		t.Fatal(err)
	}
	ref := strings.TrimPrefix(srv.URL, "http://") + "/library/python:3.11-slim"
	digest, err := Push(context.Background(), dir, ref)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	if digest != want.String() {
		t.Errorf("Push = %s, want %s", digest, want)
	}
	parsed, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Head(parsed)
	if err != nil || got.Digest != want {
		t.Errorf("the registry serves %v (%v), want %s", got, err, want)
	}
	if _, err := Push(context.Background(), filepath.Join(t.TempDir(), "none"), ref); err == nil {
		t.Error("Push of a missing layout succeeded")
	}
}

func TestDirSaysHowToBuild(t *testing.T) {
	t.Setenv(EnvDir, t.TempDir())
	if _, err := Dir("python"); err == nil || !strings.Contains(err.Error(), "make base-images") {
		t.Errorf("Dir of an unbuilt base = %v, want an error naming make base-images", err)
	}
}

// The bases make base-images built, when it has: one image each,
// pushable, whose config names its layer (a builder takes an image whose
// config lists no diff ID for an empty one).
func TestBuiltBasesPush(t *testing.T) {
	for _, base := range []string{"python", "node"} {
		dir, err := Dir(base)
		if err != nil {
			t.Skipf("%v", err)
		}
		srv := httptest.NewServer(registry.New())
		defer srv.Close()
		ref := strings.TrimPrefix(srv.URL, "http://") + "/library/" + base + ":test"
		if _, err := Push(context.Background(), dir, ref); err != nil {
			t.Fatalf("push %s: %v", base, err)
		}
		parsed, err := name.ParseReference(ref, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		img, err := remote.Image(parsed)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		layers, _ := img.Layers()
		if len(layers) == 0 || len(cfg.RootFS.DiffIDs) != len(layers) {
			t.Errorf("%s: %d layers, %d diff IDs in its config", base, len(layers), len(cfg.RootFS.DiffIDs))
		}
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
