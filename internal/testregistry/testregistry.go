// Package testregistry is a container registry on loopback for knit's
// tests, and the images they run: go-containerregistry's registry, behind
// basic auth when asked, and images packed from files of this machine
// (a static test binary, Debian's static busybox as their shell).
package testregistry

import (
	"archive/tar"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

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

// The credentials a registry started WithAuth wants.
const User, Password = "puller", "s3cret-pull"

// Busybox is Debian's static busybox (package busybox-static): the shell
// and tools of the tests' images.
const Busybox = "/bin/busybox"

// Start serves a registry on loopback until the test ends and returns its
// host:port. With auth, every request needs User's basic auth, as a
// team's private registry wants.
func Start(t testing.TB, auth bool) string {
	t.Helper()
	host, stop, err := Serve(auth)
	check(t, err)
	t.Cleanup(stop)
	return host
}

// Serve is Start for a program that is not a test (the benchmarks):
// the registry serves until stop.
func Serve(auth bool) (host string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	quiet := log.New(io.Discard, "", 0)
	var h http.Handler = registry.New(registry.Logger(quiet))
	if auth {
		h = authenticating(h)
	}
	srv := &http.Server{Handler: h, ErrorLog: quiet, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}

func authenticating(reg http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != User || p != Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="knit-test"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
		reg.ServeHTTP(w, r)
	})
}

// File is one file of an image: content, a file of this machine to copy,
// or a symlink.
type File struct {
	Content string
	Host    string
	Mode    int64 // default 0644
	Link    string
}

// WithBusybox adds busybox and links to it for the shell and tools tests
// use, under /bin.
func WithBusybox(files map[string]File) map[string]File {
	files["bin/busybox"] = File{Host: Busybox, Mode: 0o755}
	for _, applet := range []string{"sh", "id", "test", "cat", "sleep", "echo", "touch", "grep", "ls", "true", "false"} {
		files["bin/"+applet] = File{Link: "busybox"}
	}
	return files
}

// Push pushes a one-layer linux/amd64 image of files (and the
// directories they need) with cfg to ref, and returns its digest.
func Push(t testing.TB, ref string, cfg v1.Config, files map[string]File) string {
	t.Helper()
	layer, err := layerOf(files)
	check(t, err)
	img, err := PushLayers(ref, cfg, layer)
	check(t, err)
	d, err := img.Digest()
	check(t, err)
	return d.String()
}

// PushLayers pushes a linux/amd64 image of layers with cfg to ref, with
// User's credentials (a registry without auth ignores them).
func PushLayers(ref string, cfg v1.Config, layers ...v1.Layer) (v1.Image, error) {
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config = "linux", "amd64", cfg
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	if err := remote.Write(r, img, remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: User, Password: Password}))); err != nil {
		return nil, fmt.Errorf("push %s: %w", ref, err)
	}
	return img, nil
}

func layerOf(files map[string]File) (v1.Layer, error) {
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
			if d := strings.Join(parts[:i], "/") + "/"; !dirs[d] {
				dirs[d] = true
				if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
					return nil, err
				}
			}
		}
		if err := writeFile(tw, strings.Trim(p, "/"), files[p]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

func writeFile(tw *tar.Writer, path string, f File) error {
	h := &tar.Header{Name: path, Mode: f.Mode}
	if h.Mode == 0 {
		h.Mode = 0o644
	}
	if f.Link != "" {
		h.Typeflag, h.Linkname = tar.TypeSymlink, f.Link
		return tw.WriteHeader(h)
	}
	body := []byte(f.Content)
	if f.Host != "" {
		var err error
		if body, err = os.ReadFile(f.Host); err != nil {
			return err
		}
	}
	h.Typeflag, h.Size = tar.TypeReg, int64(len(body))
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(body)
	return err
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// PullSecret is a kubernetes.io/dockerconfigjson Secret in namespace ns
// holding the credentials user:password for host, as `kubectl create
// secret docker-registry` writes one.
func PullSecret(ns, name, host, user, password string) *corev1.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	}
}
