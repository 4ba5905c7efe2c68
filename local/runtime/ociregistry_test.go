//go:build !unit

package runtime

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/knitops/knit/internal/testregistry"
)

// The credentials of the tests' registry.
const registryUser, registryPassword = testregistry.User, testregistry.Password

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
func testRegistry(t *testing.T) string { return testregistry.Start(t, true) }

// pushImage pushes an image of files with cfg and answers its digest.
func pushImage(t *testing.T, ref string, cfg v1.Config, files map[string]testregistry.File) string {
	return testregistry.Push(t, ref, cfg, files)
}

// suiteImage is the tests' app image (appImage) in a registry of the
// suite's, pushed once; a test that runs it needs images (needImages).
func suiteImage(t *testing.T) string {
	t.Helper()
	needImages(t)
	suiteImages.once.Do(func() {
		// Anonymous, and serving until the test binary exits: no secret
		// to give every namespace.
		srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		suiteImages.ref = strings.TrimPrefix(srv.URL, "http://") + "/test/app:1"
		pushImage(t, suiteImages.ref, v1.Config{Entrypoint: []string{"/app/httpserver"}, Env: []string{"PATH=/bin"}}, appImage())
	})
	return suiteImages.ref
}

var suiteImages struct {
	once sync.Once
	ref  string
}

// appImage is the httpserver app as a team's image: the binary, a
// nonroot user in /etc/passwd, busybox's shell and tools for exec probes.
func appImage() map[string]testregistry.File {
	return testregistry.WithBusybox(map[string]testregistry.File{
		"app/httpserver": {Host: httpServer, Mode: 0o755},
		"etc/passwd":     {Content: "root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
		"etc/group":      {Content: "root:x:0:\nnonroot:x:65532:\n"},
	})
}
