package hub

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/api"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/forge"
	"github.com/knitops/knit/gitsync/gitserver"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// A push syncs the GitRepository of the namespace owning the repository,
// never one another namespace made first for the same URL: a squatter
// gets neither the push nor the code, and the owner's first push creates
// its own GitRepository beside it.
func TestPushSyncsTheOwnersRepository(t *testing.T) {
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	var synced []types.NamespacedName
	h, err := New(Options{Root: filepath.Join(t.TempDir(), "git"), BaseURL: "http://127.0.0.1:8090",
		Token: gitserver.StaticToken("t0ken"), RepositoryNamespaces: map[string]string{"shop": "team-a"},
		Trigger: func(_ context.Context, _ client.Client, key types.NamespacedName) error {
			synced = append(synced, key)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	squat := func(ns, name string) *knitv1alpha1.GitRepository {
		return &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "squat-" + name},
			Spec: knitv1alpha1.GitRepositorySpec{URL: h.RepoURL(name)}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(squat("aaa-tenant", "hello"), squat("aaa-tenant", "shop")).Build()
	h.SetClient(c)
	ctx := context.Background()
	for _, name := range []string{"hello", "shop"} {
		h.onPush(ctx, gitserver.Push{Repo: name, Updates: []gitserver.RefUpdate{{Ref: "refs/heads/main", Old: gitserver.ZeroSHA, New: "1111111111111111111111111111111111111111"}}})
	}
	want := []types.NamespacedName{{Namespace: "default", Name: "hello"}, {Namespace: "team-a", Name: "shop"}}
	if diff := cmp.Diff(want, synced); diff != "" {
		t.Errorf("synced (-want +got):\n%s", diff)
	}
	for _, key := range want {
		repo := &knitv1alpha1.GitRepository{}
		if err := c.Get(ctx, key, repo); err != nil {
			t.Errorf("the owner's GitRepository %s: %v", key, err)
		}
	}
}

// A webhook for a repository that does not exist, for one whose Secret is
// not meant for Git, or for one whose secret it does not know gets the
// same answer: nothing tells which GitRepositories exist.
func TestHookAnswersDoNotTellRepositoriesApart(t *testing.T) {
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Root: filepath.Join(t.TempDir(), "git"), BaseURL: "http://127.0.0.1:8090", Token: gitserver.StaticToken("t0ken")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	repo := func(ns, name, secret string) *knitv1alpha1.GitRepository {
		return &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: knitv1alpha1.GitRepositorySpec{URL: "https://example.com/" + name + ".git", SecretRef: &corev1.LocalObjectReference{Name: secret}}}
	}
	secret := func(ns, name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Data: map[string][]byte{webhookSecretKey: []byte(name + "-hook-secret")}}
	}
	h.SetClient(fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		repo("default", "hello", "hello"), secret("default", "hello", map[string]string{gitsource.CredentialsLabel: "true"}),
		repo("team-b", "shop", "shop"), secret("team-b", "shop", nil),
		repo("team-b", "gone", "gone"),
	).Build())
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)
	body := []byte(`{"ref":"refs/heads/main","after":"1111111111111111111111111111111111111111","repository":{"clone_url":"https://example.com/hello.git"}}`)
	answer := func(path string, key []byte) string {
		req, err := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-GitHub-Event", "push")
		req.Header.Set("X-Hub-Signature-256", forge.SignHMACSHA256(key, body))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
	want := answer("/hooks/github/hello", []byte("guess"))
	if !strings.HasPrefix(want, "401 ") {
		t.Fatalf("a bad signature got %q, want a 401", want)
	}
	for _, tc := range []struct {
		name, path string
		key        []byte
	}{
		{"a repository that does not exist", "/hooks/github/nope", []byte("guess")},
		{"one in another namespace that does not exist", "/hooks/github/team-b/nope", []byte("guess")},
		{"one whose Secret is not meant for Git, signed with it", "/hooks/github/team-b/shop", []byte("shop-hook-secret")},
		{"one whose Secret is missing", "/hooks/github/team-b/gone", []byte("guess")},
	} {
		if got := answer(tc.path, tc.key); got != want {
			t.Errorf("%s: answered %q, a bad signature %q", tc.name, got, want)
		}
	}
}
