package gitrepository

import (
	"context"
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// The Git server's token goes to the Git server's repositories only.
func TestGitServerAuth(t *testing.T) {
	token := func(context.Context) (string, error) { return "t0ken", nil }
	server := &GitServer{URL: "http://127.0.0.1:8090", Token: token}
	broken := &GitServer{URL: "http://127.0.0.1:8090", Token: func(context.Context) (string, error) { return "", errors.New("no Secret") }}
	for _, tc := range []struct {
		name    string
		server  *GitServer
		url     string
		want    transport.AuthMethod
		wantErr bool
	}{
		{name: "a pushed repository", server: server, url: "http://127.0.0.1:8090/git/hello.git", want: &githttp.BasicAuth{Username: "knit", Password: "t0ken"}},
		{name: "another port", server: server, url: "http://127.0.0.1:9999/git/steal.git"},
		{name: "another host", server: server, url: "https://github.com/knitops/knit.git"},
		{name: "no Git server", url: "http://127.0.0.1:8090/git/hello.git"},
		{name: "the token cannot be read", server: broken, url: "http://127.0.0.1:8090/git/hello.git", wantErr: true},
		{name: "the token is not read for another host", server: broken, url: "http://127.0.0.1:9999/git/hello.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"}, Spec: knitv1alpha1.GitRepositorySpec{URL: tc.url}}
			got, err := tc.server.auth(context.Background(), repo)
			if (err != nil) != tc.wantErr {
				t.Fatalf("auth = %v, want error %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("auth (-want +got):\n%s", diff)
			}
		})
	}
}
