package kofixture

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The app builds through the proxy alone, and the broken one fails with
// BrokenError: what the journeys rely on.
func TestAppBuildsThroughTheProxy(t *testing.T) {
	p, err := StartModuleProxy("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, broken := range []bool{false, true} {
		dir := t.TempDir()
		if err := WriteApp(dir, "built", "v1", broken); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "hello"), "./cmd/hello")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOPROXY="+p.URL, "GOMODCACHE="+t.TempDir(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if broken != (err != nil) || broken && !strings.Contains(string(out), BrokenError) {
			t.Errorf("go build (broken=%v): %v\n%s", broken, err, out)
		}
	}
	if p.Requests() == 0 {
		t.Error("the builds never asked the proxy")
	}
	resp, err := http.Get(p.URL + "/github.com/google/go-cmp/@v/list")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET @v/list = %d", resp.StatusCode)
	}
}
