//go:build linux

package images

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/containerd/v2/core/mount"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/internal/testregistry"
)

// testRegistry is a registry on loopback that wants basic auth.
func testRegistry(t *testing.T) string { return testregistry.Start(t, true) }

var goodAuth = authn.NewMultiKeychain(staticKeychain{authn.FromConfig(authn.AuthConfig{Username: testregistry.User, Password: testregistry.Password})})

type staticKeychain struct{ a authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.a, nil }

type entry struct {
	name, link string
	typ        byte
	body       string
	uid        int
	mode       int64
}

func layer(t *testing.T, entries ...entry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Uid: e.uid, Gid: e.uid, Mode: e.mode, Size: int64(len(e.body))}
		if h.Mode == 0 {
			h.Mode = 0o644
			if e.typ == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			_, _ = io.WriteString(tw, e.body)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func push(t *testing.T, ref string, img v1.Image) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img, remote.WithAuthFromKeychain(goodAuth)); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return d.String()
}

func testImage(t *testing.T, cfg v1.Config, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config = "linux", "amd64", cfg
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: layers are unpacked with their owners and overlayfs whiteouts, and root filesystems mounted")
	}
}

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Root: t.TempDir(), Platform: v1.Platform{OS: "linux", Architecture: "amd64"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPullUnpacksLayersAsARuntime pulls a two-layer image and reads its
// root filesystem: the second layer's whiteout hides the first's file, a
// hard link and owners survive, the config is the image's.
func TestPullUnpacksLayersAsARuntime(t *testing.T) {
	needRoot(t)
	host := testRegistry(t)
	img := testImage(t, v1.Config{Entrypoint: []string{"/app"}, Cmd: []string{"serve"}, User: "1234", WorkingDir: "/srv", Env: []string{"A=1"}},
		layer(t,
			entry{name: "etc/", typ: tar.TypeDir},
			entry{name: "etc/gone", typ: tar.TypeReg, body: "deleted by the next layer"},
			entry{name: "srv/", typ: tar.TypeDir, uid: 1234},
			entry{name: "srv/data", typ: tar.TypeReg, body: "data", uid: 1234},
		),
		layer(t,
			entry{name: "etc/.wh.gone", typ: tar.TypeReg},
			entry{name: "srv/data2", typ: tar.TypeReg, body: "data", uid: 1234},
			entry{name: "srv/link", typ: tar.TypeLink, link: "srv/data2", uid: 1234},
		))
	digest := push(t, host+"/team/app:1.2", img)

	s := openStore(t)
	got, err := s.Pull(context.Background(), host+"/team/app:1.2", corev1.PullIfNotPresent, goodAuth)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != digest || got.DigestReference() != host+"/team/app@"+digest {
		t.Errorf("pulled %s, want %s", got.DigestReference(), digest)
	}
	if got.Config.User != "1234" || got.Config.WorkingDir != "/srv" || got.Config.Entrypoint[0] != "/app" {
		t.Errorf("config = %+v", got.Config)
	}

	root := mountRootfs(t, s, "c1", got)
	if _, err := os.Stat(filepath.Join(root, "etc/gone")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("whiteout not applied: stat etc/gone: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(root, "srv/link"))
	if err != nil || string(b) != "data" {
		t.Errorf("hard link: %q, %v", b, err)
	}
	var st1, st2 = stat(t, filepath.Join(root, "srv/data2")), stat(t, filepath.Join(root, "srv/link"))
	if st1.Ino != st2.Ino {
		t.Error("srv/link is not a hard link of srv/data2")
	}
	if st1.Uid != 1234 {
		t.Errorf("srv/data2 owned by %d, want 1234", st1.Uid)
	}
	// A container writes to its own root only.
	if err := os.WriteFile(filepath.Join(root, "srv/new"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := mountRootfs(t, s, "c2", got)
	if _, err := os.Stat(filepath.Join(other, "srv/new")); !errors.Is(err, os.ErrNotExist) {
		t.Error("one container's write is seen by another's root filesystem")
	}
}

func mountRootfs(t *testing.T, s *Store, key string, img *Image) string {
	t.Helper()
	ms, err := s.Prepare(context.Background(), key, img)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := mount.All(ms, dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := mount.UnmountAll(dir, 0); err != nil {
			t.Error(err)
		}
		if err := s.Release(context.Background(), key); err != nil {
			t.Error(err)
		}
	})
	return dir
}

func TestPullErrorsQuoteTheRegistry(t *testing.T) {
	needRoot(t)
	host := testRegistry(t)
	push(t, host+"/team/app:1", testImage(t, v1.Config{Cmd: []string{"/app"}}, layer(t, entry{name: "app", typ: tar.TypeReg, body: "x"})))
	s := openStore(t)
	bad := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: testregistry.User, Password: "wrong"})}
	for _, tc := range []struct {
		ref    string
		kc     authn.Keychain
		policy corev1.PullPolicy
		reason string
		says   string
	}{
		{host + "/team/app:1", bad, corev1.PullIfNotPresent, ReasonErrImagePull, "UNAUTHORIZED"},
		{host + "/team/app:1", authn.NewMultiKeychain(), corev1.PullIfNotPresent, ReasonErrImagePull, "UNAUTHORIZED"},
		{host + "/team/app:nope", goodAuth, corev1.PullIfNotPresent, ReasonErrImagePull, "MANIFEST_UNKNOWN"},
		{host + "/team/app:1", goodAuth, corev1.PullNever, ReasonErrImageNeverPull, "not present with pull policy of Never"},
		{"Bad//Name", goodAuth, corev1.PullIfNotPresent, ReasonInvalidImageName, "couldn't parse image name"},
	} {
		_, err := s.Pull(context.Background(), tc.ref, tc.policy, tc.kc)
		var pe *PullError
		if !errors.As(err, &pe) || pe.Reason != tc.reason || !strings.Contains(pe.Message, tc.says) {
			t.Errorf("Pull(%s) = %v, want %s saying %q", tc.ref, err, tc.reason, tc.says)
		}
		if err != nil && strings.Contains(err.Error(), "wrong") {
			t.Errorf("the password is in the error: %v", err)
		}
	}
}

// TestPullPolicy: IfNotPresent and Never use what the store has without
// asking the registry; Always asks, and follows a tag pushed again.
func TestPullPolicy(t *testing.T) {
	needRoot(t)
	host := testRegistry(t)
	ref := host + "/team/app:latest"
	first := push(t, ref, testImage(t, v1.Config{Cmd: []string{"one"}}, layer(t, entry{name: "one", typ: tar.TypeReg, body: "1"})))
	s := openStore(t)
	if img, err := s.Pull(context.Background(), ref, corev1.PullAlways, goodAuth); err != nil || img.Digest != first {
		t.Fatalf("first pull: %v, %v", img, err)
	}
	second := push(t, ref, testImage(t, v1.Config{Cmd: []string{"two"}}, layer(t, entry{name: "two", typ: tar.TypeReg, body: "2"})))
	noAuth := authn.NewMultiKeychain() // the registry would refuse: only the store can answer
	for _, p := range []corev1.PullPolicy{corev1.PullIfNotPresent, corev1.PullNever} {
		if img, err := s.Pull(context.Background(), ref, p, noAuth); err != nil || img.Digest != first {
			t.Errorf("%s: %v, %v; want the stored %s", p, img, err, first)
		}
	}
	img, err := s.Pull(context.Background(), ref, corev1.PullAlways, goodAuth)
	if err != nil || img.Digest != second || img.Config.Cmd[0] != "two" {
		t.Fatalf("Always after a new push: %v, %v; want %s", img, err, second)
	}
	byDigest := host + "/team/app@" + first
	if img, err := s.Pull(context.Background(), byDigest, corev1.PullIfNotPresent, noAuth); err != nil || img.Config.Cmd[0] != "one" {
		t.Errorf("the first digest is still in the store: %v, %v", img, err)
	}
}

// TestIndexPicksThisPlatform: an image index resolves to the manifest for
// the store's platform, and its digest is the index's.
func TestIndexPicksThisPlatform(t *testing.T) {
	needRoot(t)
	host := testRegistry(t)
	amd := testImage(t, v1.Config{Cmd: []string{"amd64"}}, layer(t, entry{name: "a", typ: tar.TypeReg, body: "a"}))
	arm, _ := mutate.ConfigFile(amd, &v1.ConfigFile{OS: "linux", Architecture: "arm64", Config: v1.Config{Cmd: []string{"arm64"}}, RootFS: v1.RootFS{Type: "layers"}})
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}})
	r, _ := name.ParseReference(host + "/multi:1")
	if err := remote.WriteIndex(r, idx, remote.WithAuthFromKeychain(goodAuth)); err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	img, err := openStore(t).Pull(context.Background(), host+"/multi:1", corev1.PullIfNotPresent, goodAuth)
	if err != nil {
		t.Fatal(err)
	}
	if img.Config.Cmd[0] != "amd64" || img.Digest != want.String() {
		t.Errorf("pulled %s running %v; want the index %s's amd64 image", img.Digest, img.Config.Cmd, want)
	}
}

func TestPlainHTTPOnlyToLoopbackAndListed(t *testing.T) {
	g := plainHTTPGuard{allowed: []string{"registry.lan:5000"}}
	for host, want := range map[string]bool{
		"127.0.0.1:5000":    true,
		"[::1]:5000":        true,
		"localhost:5000":    true,
		"registry.lan:5000": true,
		"registry.lan":      false,
		"10.0.0.7:5000":     false,
		"192.168.1.2":       false,
		"ghcr.io":           false,
	} {
		if got := g.mayUsePlainHTTP(host); got != want {
			t.Errorf("mayUsePlainHTTP(%s) = %v, want %v", host, got, want)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "http://10.0.0.7:5000/v2/", nil)
	if _, err := (plainHTTPGuard{next: http.DefaultTransport}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "plain HTTP is allowed only") {
		t.Errorf("plain HTTP to a private address: %v", err)
	}
}
