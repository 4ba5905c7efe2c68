//go:build !unit

package runtime

import (
	"archive/tar"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The credentials of the tests' registry.
const registryUser, registryPassword = "puller", "s3cret-pull"

// needImages skips a test that runs images when this machine cannot.
func needImages(t *testing.T) {
	t.Helper()
	if suite.ociErr != nil {
		if os.Geteuid() != 0 {
			t.Skipf("needs root: images run through runc in namespaces and cgroups (%v)", suite.ociErr)
		}
		t.Fatalf("root, but images cannot run: %v", suite.ociErr)
	}
}

// testRegistry is a registry on loopback that wants basic auth, as a
// team's private registry does. It answers its host:port.
func testRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(authenticating(registry.New(registry.Logger(log.New(io.Discard, "", 0)))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// authenticating wants registryUser's basic auth before reg answers.
func authenticating(reg http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != registryUser || p != registryPassword {
			w.Header().Set("WWW-Authenticate", `Basic realm="knit-test"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
		reg.ServeHTTP(w, r)
	})
}

// suiteImage is the tests' app image (appImage) in a registry of the
// suite's, pushed once; a test that runs it needs images (needImages).
func suiteImage(t *testing.T) string {
	t.Helper()
	needImages(t)
	suiteImages.once.Do(func() {
		srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0)))) // anonymous: no secret to give every namespace
		suiteImages.ref = strings.TrimPrefix(srv.URL, "http://") + "/test/app:1"
		suiteImages.host = strings.TrimPrefix(srv.URL, "http://")
		pushImage(t, suiteImages.ref, v1.Config{Entrypoint: []string{"/app/httpserver"}, Env: []string{"PATH=/bin"}}, appImage())
	})
	return suiteImages.ref
}

// suiteImages is suiteImage's registry: it serves until the test binary
// exits.
var suiteImages struct {
	once      sync.Once
	ref, host string
}

// imageFile is one file of a test image: content, or a host file to copy.
type imageFile struct {
	content string
	host    string
	mode    int64
	link    string // a symlink's target
}

// pushImage pushes an image of files (and the directories they need)
// with cfg, and answers its digest.
func pushImage(t *testing.T, ref string, cfg v1.Config, files map[string]imageFile) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	dirs := map[string]bool{}
	for _, p := range paths {
		parts := strings.Split(strings.Trim(p, "/"), "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/") + "/"
			if !dirs[d] {
				dirs[d] = true
				must(t, tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}))
			}
		}
		f := files[p]
		h := &tar.Header{Name: strings.Trim(p, "/"), Mode: f.mode}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if f.link != "" {
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.link
			must(t, tw.WriteHeader(h))
			continue
		}
		body := []byte(f.content)
		if f.host != "" {
			var err error
			if body, err = os.ReadFile(f.host); err != nil {
				t.Fatal(err)
			}
		}
		h.Typeflag, h.Size = tar.TypeReg, int64(len(body))
		must(t, tw.WriteHeader(h))
		_, err := tw.Write(body)
		must(t, err)
	}
	must(t, tw.Close())
	b := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	must(t, err)
	img, err := mutate.AppendLayers(empty.Image, layer)
	must(t, err)
	cf, err := img.ConfigFile()
	must(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config = "linux", "amd64", cfg
	img, err = mutate.ConfigFile(img, cf)
	must(t, err)
	r, err := name.ParseReference(ref)
	must(t, err)
	auth := authn.FromConfig(authn.AuthConfig{Username: registryUser, Password: registryPassword})
	must(t, remote.Write(r, img, remote.WithAuth(auth)))
	d, err := img.Digest()
	must(t, err)
	return d.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// appImage is the httpserver app as a team's image: the binary, a
// nonroot user in /etc/passwd, busybox's shell and tools for exec probes.
func appImage() map[string]imageFile {
	files := map[string]imageFile{
		"app/httpserver": {host: httpServer, mode: 0o755},
		"etc/passwd":     {content: "root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
		"etc/group":      {content: "root:x:0:\nnonroot:x:65532:\n"},
		"bin/busybox":    {host: busybox, mode: 0o755},
	}
	for _, applet := range []string{"sh", "id", "test", "cat", "sleep", "echo", "touch", "grep"} {
		files["bin/"+applet] = imageFile{link: "busybox"}
	}
	return files
}

// busybox is Debian's static busybox (busybox-static), which test images
// carry as their shell.
const busybox = "/bin/busybox"

// pullSecret is a kubernetes.io/dockerconfigjson Secret for host.
func pullSecret(ns, name, host, user, password string) *corev1.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	}
}
