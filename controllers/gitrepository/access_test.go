package gitrepository

import (
	"context"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/gitserver"
)

// What a fetch presents, and what it refuses to present: the Git server's
// token only to GitRepositories of the namespace owning the repository,
// a Secret's keys only when the Secret is meant for Git, and never a URL
// carrying credentials, whose refusal does not repeat them.
func TestFetchCredentials(t *testing.T) {
	const server = "http://127.0.0.1:8090"
	secret := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: name, Labels: labels},
			Data: map[string][]byte{"username": []byte("me"), "password": []byte("forge-pass"), "token": []byte("sa-token")}}
	}
	reader := fake.NewClientBuilder().WithObjects(
		secret("git-creds", map[string]string{"knit.dev/git-credentials": "true"}),
		secret("sa-token", nil),
	).Build()
	for _, tc := range []struct {
		name      string
		namespace string
		url       string
		secretRef string
		want      transport.AuthMethod
		wantErr   string // in the error; "" for none
		tokenRead bool
	}{
		{name: "the owner's repository gets the token", namespace: "default", url: server + "/git/hello.git",
			want: &githttp.BasicAuth{Username: "knit", Password: "t0ken"}, tokenRead: true},
		{name: "an assigned repository gets the token in its namespace", namespace: "team-b", url: server + "/git/shop.git",
			want: &githttp.BasicAuth{Username: "knit", Password: "t0ken"}, tokenRead: true},
		{name: "another namespace does not get the token", namespace: "team-b", url: server + "/git/hello.git",
			wantErr: `repository hello on knit's Git server belongs to namespace default`},
		{name: "nor the owner of another repository", namespace: "default", url: server + "/git/shop",
			wantErr: `belongs to namespace team-b`},
		{name: "a URL with credentials is refused without them", namespace: "team-b", url: "https://me:s3cret@example.com/app.git",
			wantErr: "https://example.com/app.git carries credentials"},
		{name: "a user name alone is refused too", namespace: "team-b", url: "https://ghp_abc@example.com/app.git",
			wantErr: "carries credentials"},
		{name: "a Secret meant for Git", namespace: "team-b", url: "https://example.com/app.git", secretRef: "git-creds",
			want: &githttp.BasicAuth{Username: "me", Password: "forge-pass"}},
		{name: "a Secret not meant for Git is never sent", namespace: "team-b", url: "https://example.com/app.git", secretRef: "sa-token",
			wantErr: `Secret sa-token is not labelled knit.dev/git-credentials=true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := false
			r := &Reconciler{reader: reader, gitServer: &GitServer{URL: server,
				Token:  func(context.Context) (string, error) { read = true; return "t0ken", nil },
				Owners: gitserver.Owners{Default: "default", Repos: map[string]string{"shop": "team-b"}}}}
			repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Name: "app"},
				Spec: knitv1alpha1.GitRepositorySpec{URL: tc.url}}
			if tc.secretRef != "" {
				repo.Spec.SecretRef = &corev1.LocalObjectReference{Name: tc.secretRef}
			}
			got, err := r.auth(context.Background(), repo)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("auth: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("auth error = %v, want one containing %q", err, tc.wantErr)
			case err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "ghp_abc")):
				t.Errorf("the refusal repeats the URL's credentials: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("auth (-want +got):\n%s", diff)
			}
			if read != tc.tokenRead {
				t.Errorf("the Git server's token was read: %t, want %t", read, tc.tokenRead)
			}
		})
	}
}
