package source

import (
	"bufio"
	"math/rand/v2"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/knitops/knit/gitsync/egress"
)

// servedRepo is a repository served over smart HTTP on loopback by git's
// own http-backend, as a forge would, counting what it sends.
type servedRepo struct {
	URL string
	// Policy allows the server's address, as an operator would.
	Policy func() *egress.Policy

	mu        sync.Mutex
	sent      int64 // bytes of upload-pack responses (the packs)
	packPosts int   // upload-pack requests: fetches that asked for objects
}

func serveRepo(t *testing.T, dir string) *servedRepo {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + filepath.Dir(dir), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir,
	}}
	s := &servedRepo{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			backend.ServeHTTP(w, r)
			return
		}
		s.mu.Lock()
		s.packPosts++
		s.mu.Unlock()
		backend.ServeHTTP(&countingResponse{ResponseWriter: w, s: s}, r)
	}))
	t.Cleanup(srv.Close)
	allowed, err := egress.ParseRules(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s.URL = srv.URL + "/" + filepath.Base(dir) + "/.git"
	s.Policy = func() *egress.Policy { return &egress.Policy{Allow: allowed} }
	return s
}

func (s *servedRepo) counts() (sent int64, packPosts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent, s.packPosts
}

type countingResponse struct {
	http.ResponseWriter
	s *servedRepo
}

func (w *countingResponse) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.s.mu.Lock()
	w.s.sent += int64(n)
	w.s.mu.Unlock()
	return n, err
}

// randomFile writes size bytes no compression shrinks to dir/name,
// without holding them in memory; seed makes them reproducible.
func randomFile(t *testing.T, dir, name string, size int, seed uint64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)})
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= len(buf) {
		rng.Read(buf)
		if _, err := w.Write(buf[:min(left, len(buf))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// cacheSize is what the objects of a cache repository weigh on disk.
func cacheSize(t *testing.T, c *Cache, key string) int64 {
	t.Helper()
	n, err := objectsSize(c.path(key))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
