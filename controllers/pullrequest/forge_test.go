package pullrequest

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/api"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/egress"
	"github.com/knitops/knit/gitsync/githubapp"
	"github.com/knitops/knit/gitsync/githubapp/githubapptest"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// A GitHub repository whose Secret holds GitHub App credentials reports
// to the forge with an installation token: the factory asks GitHub for
// one (and not again while it is fresh); without the exchange there is no
// token to report with.
func TestForgeFromSecretWithGitHubApp(t *testing.T) {
	github := githubapptest.New(t)
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app",
		Labels: map[string]string{gitsource.CredentialsLabel: "true"}}, Data: github.Secret()}
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"},
		Spec: knitv1alpha1.GitRepositorySpec{URL: "https://github.com/ada/hello.git", Provider: knitv1alpha1.GitProviderGitHub,
			SecretRef: &corev1.LocalObjectReference{Name: "app"}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build()
	policy := func() *egress.Policy { return &egress.Policy{} }
	ctx := context.Background()

	if _, err := ForgeFromSecret(c, policy, nil)(ctx, repo); err == nil || !strings.Contains(err.Error(), "no API token") {
		t.Fatalf("without the exchange: %v, want no API token", err)
	}
	forges := ForgeFromSecret(c, policy, githubapp.New(github.Client()))
	for range 2 {
		f, err := forges(ctx, repo)
		if err != nil || f == nil {
			t.Fatalf("forge client = %v, %v", f, err)
		}
	}
	if n := github.Asked.Load(); n != 1 {
		t.Errorf("GitHub issued %d tokens for two clients, want 1", n)
	}
}
