package source

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knitops/knit/gitsync/egress"
)

// A GitRepository URL on loopback (a listener of the attacker's, or the
// host's own services) is refused under the default egress policy, and
// with it any credentials it would have been sent; so is a local
// directory. The refusal of a name comes after resolving it, inside
// go-git's own connection. An operator's allow rule lets the fetch go.
func TestFetchObeysEgressPolicy(t *testing.T) {
	dir, git := gitRepo(t)
	writeFile(t, dir, "a.txt", "a\n")
	git("add", ".")
	git("commit", "-qm", "a")
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	var requests int
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + filepath.Dir(dir), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir,
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	path := "/" + filepath.Base(dir) + "/.git"
	rules := func(s string) []egress.Rule {
		r, err := egress.ParseRules(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name    string
		url     string
		policy  *egress.Policy
		allowed bool
	}{
		{"loopback by address", srv.URL + path, &egress.Policy{}, false},
		{"loopback by name, refused once resolved", "http://localhost:" + port + path, &egress.Policy{}, false},
		{"a local directory", dir, &egress.Policy{}, false},
		{"allowed by the operator", srv.URL + path, &egress.Policy{Allow: rules("127.0.0.1:" + port)}, true},
		{"a local directory where tests allow file", dir, &egress.Policy{Schemes: []string{"file"}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			requests = 0
			c := &Cache{Dir: t.TempDir(), Egress: func() *egress.Policy { return tc.policy }}
			_, err := c.Fetch(context.Background(), "default/hello", tc.url, []string{"main"}, nil)
			var denied *egress.DeniedError
			switch {
			case tc.allowed && err != nil:
				t.Errorf("fetch: %v, want it allowed", err)
			case !tc.allowed && !errors.As(err, &denied):
				t.Errorf("fetch: err = %v, want a *egress.DeniedError", err)
			case !tc.allowed && requests != 0:
				t.Errorf("the server saw %d requests, want none", requests)
			case !tc.allowed:
				t.Logf("refused: %v", err)
				if denied.Allowable && !strings.Contains(err.Error(), "egress-allow") {
					t.Errorf("the refusal does not say how to allow it: %v", err)
				}
			}
		})
	}
}
