//go:build !unit

package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// gitToken is knit dev's Git token, which it writes beside the kubeconfig.
func (d *knitDev) gitToken(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.stateDir, "git-token"))
	if err != nil {
		t.Fatalf("knit dev's Git token: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// gitURL is where git pushes repo, as the README and the banner show:
// any user name, the token as the password.
func (d *knitDev) gitURL(t *testing.T, repo string) string {
	t.Helper()
	return "http://knit:" + d.gitToken(t) + "@" + d.gitAddr + "/git/" + repo + ".git"
}

// gitServerRefusesStrangers: before the first push, a push without the
// token, a request without it and a request naming a host that is not
// knit dev's are refused, and none of them creates a repository or a
// GitRepository; the banner shows the token.
func (j *gitopsJourney) gitServerRefusesStrangers(t *testing.T) {
	token := j.d.gitToken(t)
	if !strings.Contains(j.d.output.String(), "git token    "+token) {
		t.Errorf("knit dev's banner does not show its Git token:\n%s", tail(j.d.output.String(), 20))
	}
	if out, err := j.app.tryGit("push", "http://"+j.d.gitAddr+"/git/hello.git", "main"); err == nil {
		t.Errorf("a push without the token succeeded:\n%s", out)
	}
	if out, err := j.app.tryGit("push", "http://knit:wrong@"+j.d.gitAddr+"/git/hello.git", "main"); err == nil {
		t.Errorf("a push with a wrong token succeeded:\n%s", out)
	}
	for _, tc := range []struct {
		host, password string
		want           int
	}{
		{"", "", http.StatusUnauthorized},
		{"", "wrong", http.StatusUnauthorized},
		{"attacker.example:80", token, http.StatusMisdirectedRequest},
		{"rebound.attacker.example", "", http.StatusMisdirectedRequest},
	} {
		req, err := http.NewRequest(http.MethodGet, "http://"+j.d.gitAddr+"/git/hello.git/info/refs?service=git-receive-pack", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.password != "" {
			req.SetBasicAuth("knit", tc.password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want || tc.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("info/refs for a push, Host %q, password %q = %d (WWW-Authenticate %q), want %d",
				tc.host, tc.password, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(j.d.stateDir, "git", "hello.git")); !os.IsNotExist(err) {
		t.Errorf("refused requests created repository hello.git (stat: %v)", err)
	}
	repos := &knitv1alpha1.GitRepositoryList{}
	if err := j.c.List(context.Background(), repos); err != nil {
		t.Fatal(err)
	}
	if len(repos.Items) != 0 {
		t.Errorf("refused requests created GitRepositories %v", repos.Items)
	}
}
