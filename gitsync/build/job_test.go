package build

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A build reads the repository's own credentials (copied beside the Job)
// when it has some, else knit's Git server's token from its Secret, and
// only for a repository on that server.
func TestJobGitCredentials(t *testing.T) {
	cfg := Config{Namespace: "knit-system", Toolchain: "t", Registry: "r",
		GitServerURL: "http://knit-gitserver.knit-system.svc:8090", GitServerSecret: "knit-gitserver-token"}
	key := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name        string
		url, copied string
		cfg         Config
		want        map[string]string // env name → Secret/key, or =value
	}{
		{name: "knit's Git server", url: "http://knit-gitserver.knit-system.svc:8090/git/hello.git", cfg: cfg,
			want: map[string]string{"GIT_USERNAME": "=knit", "GIT_PASSWORD": "knit-gitserver-token/token"}},
		{name: "the repository's own credentials first", url: "http://knit-gitserver.knit-system.svc:8090/git/hello.git", copied: "job-source", cfg: cfg,
			want: map[string]string{"GIT_USERNAME": "job-source/username", "GIT_PASSWORD": "job-source/password", "GIT_BEARERTOKEN": "job-source/bearerToken"}},
		{name: "another host never gets the token", url: "http://attacker.example:8090/git/hello.git", cfg: cfg, want: map[string]string{}},
		{name: "no Git server configured", url: "http://knit-gitserver.knit-system.svc:8090/git/hello.git", want: map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			if c.Namespace == "" {
				c = Config{Namespace: "knit-system", Toolchain: "t", Registry: "r"}
			}
			job, err := Job(c, Request{Namespace: "default", Repository: "hello", URL: tc.url, Commit: "c", Tree: "t", Image: "ko://./cmd/hello", Credentials: tc.copied}, key)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, e := range podContainer(t, job.Spec.Template.Spec, fetchStep).Env {
				switch {
				case e.Name != "GIT_USERNAME" && e.Name != "GIT_PASSWORD" && e.Name != "GIT_BEARERTOKEN":
				case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
					got[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
				default:
					got[e.Name] = "=" + e.Value
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Git credentials of the build (-want +got):\n%s", diff)
			}
		})
	}
}
