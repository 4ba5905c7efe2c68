//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/githubapp/githubapptest"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// serveGit serves g over git's own http-backend on loopback, behind basic
// auth as GitHub takes an installation token (user x-access-token),
// accepting the tokens ok says are valid. It returns the repository's URL.
func serveGit(t *testing.T, g *gitRepo, ok func(token string) bool) string {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + filepath.Dir(g.dir), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + g.dir,
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, found := r.BasicAuth(); !found || u != "x-access-token" || !ok(p) {
			w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	allowLoopback(t, srv.Listener.Addr().String())
	return srv.URL + "/" + filepath.Base(g.dir) + "/.git"
}

// A repository whose Secret holds GitHub App credentials is fetched with
// an installation token the controller asked GitHub for (the fake of its
// documented endpoint); an installation GitHub refuses leaves Fetched False
// with GitHub's words and nothing of the key.
func TestGitHubAppCredentials(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	github := githubapptest.New(t)
	allowLoopback(t, github.Listener.Addr().String())
	g := newGitRepo(t)
	first := g.commit("Hello", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("App")})
	var presented atomic.Value
	url := serveGit(t, g, func(tok string) bool { presented.Store(tok); return strings.HasPrefix(tok, "ghs_token") })

	data := github.Secret()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app", Labels: map[string]string{gitsource.CredentialsLabel: "true"}}, Data: data}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec: knitv1alpha1.GitRepositorySpec{URL: url, SecretRef: &corev1.LocalObjectReference{Name: "app"}, Interval: metav1.Duration{Duration: 3600e9}}}
	if err := k8s.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	waitTemplate(t, ns, "hello-"+first[:7])
	if tok, _ := presented.Load().(string); !strings.HasPrefix(tok, "ghs_token") {
		t.Fatalf("the Git server saw %q, want an installation token", tok)
	}

	t.Run("an installation GitHub does not know says so", func(t *testing.T) {
		bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-denied", Labels: map[string]string{gitsource.CredentialsLabel: "true"}}, Data: github.Secret()}
		bad.Data["githubAppInstallationID"] = []byte("7") // a fresh cache entry: asks GitHub
		if err := k8s.Create(ctx, bad); err != nil {
			t.Fatal(err)
		}
		denied := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "denied"},
			Spec: knitv1alpha1.GitRepositorySpec{URL: url, SecretRef: &corev1.LocalObjectReference{Name: "app-denied"}, Interval: metav1.Duration{Duration: 3600e9}}}
		if err := k8s.Create(ctx, denied); err != nil {
			t.Fatal(err)
		}
		eventually(t, "Fetched=False GitHubAppTokenFailed", func(ctx context.Context) (bool, string) {
			c, _ := repoCondition(ctx, ns, "denied", knitv1alpha1.GitRepositoryConditionFetched)
			if c == nil || !c.IsFalse() || c.Reason != ReasonGitHubAppToken {
				return false, fmt.Sprintf("%+v", c)
			}
			if strings.Contains(c.Message, "PRIVATE KEY") {
				t.Errorf("the condition quotes the key: %s", c.Message)
			}
			return strings.Contains(c.Message, "GitHub App 1234 installation 7") && strings.Contains(c.Message, "404 Not Found"), c.Message
		})
	})
}
