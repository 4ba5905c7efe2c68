package forgeapi

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/knitops/knit/gitsync/forge"
)

func TestDeriveEndpoint(t *testing.T) {
	cases := []struct {
		provider forge.Forge
		repoURL  string
		apiURL   string
		wantBase string
		wantRepo string
		wantErr  string
	}{
		// GitHub and GitHub Enterprise Server.
		{forge.ForgeGitHub, "https://github.com/o/r.git", "", "https://api.github.com", "o/r", ""},
		{forge.ForgeGitHub, "https://github.com/o/r", "", "https://api.github.com", "o/r", ""},
		{forge.ForgeGitHub, "git@github.com:o/r.git", "", "https://api.github.com", "o/r", ""},
		{forge.ForgeGitHub, "ssh://git@github.com/o/r.git", "", "https://api.github.com", "o/r", ""},
		{forge.ForgeGitHub, "https://x-access-token:ghs_secret@github.com/o/r.git", "", "https://api.github.com", "o/r", ""},
		{forge.ForgeGitHub, "https://ghe.example.com/o/r.git", "", "https://ghe.example.com/api/v3", "o/r", ""},
		{forge.ForgeGitHub, "https://github.com/o/r.git", "http://127.0.0.1:8080/", "http://127.0.0.1:8080", "o/r", ""},
		{forge.ForgeGitHub, "https://github.com/o/r/extra.git", "", "", "", `GitHub repositories are owner/name, not "o/r/extra"`},
		// Gitea and Forgejo, at the root or under a sub-path ROOT_URL.
		{forge.ForgeGitea, "http://127.0.0.1:3000/ada/hello.git", "", "http://127.0.0.1:3000/api/v1", "ada/hello", ""},
		{forge.ForgeGitea, "https://example.com/git/ada/hello.git", "", "https://example.com/git/api/v1", "ada/hello", ""},
		{forge.ForgeGitea, "ssh://git@gitea.example.com:2222/ada/hello.git", "", "https://gitea.example.com/api/v1", "ada/hello", ""},
		{forge.ForgeGitea, "git@codeberg.org:ada/hello.git", "", "https://codeberg.org/api/v1", "ada/hello", ""},
		{forge.ForgeGitea, "http://127.0.0.1:3000/ada/hello.git", "http://gitea.gitea.svc:3000/api/v1", "http://gitea.gitea.svc:3000/api/v1", "ada/hello", ""},
		// GitLab: the project id is the whole escaped path.
		{forge.ForgeGitLab, "https://gitlab.com/g/sub/p.git", "", "https://gitlab.com/api/v4", "g%2Fsub%2Fp", ""},
		{forge.ForgeGitLab, "https://gitlab.com/g/p", "", "https://gitlab.com/api/v4", "g%2Fp", ""},
		{forge.ForgeGitLab, "git@gitlab.example.com:g/sub/p.git", "", "https://gitlab.example.com/api/v4", "g%2Fsub%2Fp", ""},
		{forge.ForgeGitLab, "https://oauth2:glpat-secret@gitlab.example.com/g/p.git", "", "https://gitlab.example.com/api/v4", "g%2Fp", ""},
		{forge.ForgeGitLab, "https://example.com/gitlab/g/p.git", "https://example.com/gitlab/api/v4", "https://example.com/gitlab/api/v4", "g%2Fp", ""},
		// What cannot be derived.
		{forge.ForgeGitLab, "https://gitlab.com/p.git", "", "", "", "names no owner/repository"},
		{forge.ForgeGitea, "https://gitea.example.com/", "", "", "", "is not a repository path"},
		{forge.ForgeGitea, "https://gitea.example.com/a//b", "", "", "", "is not a repository path"},
		{forge.ForgeGitea, "ftp://gitea.example.com/a/b", "", "", "", `scheme "ftp"`},
		{forge.ForgeGitea, "/srv/git/a/b", "", "", "", "neither a URL nor user@host:path"},
		{forge.ForgeGitea, "file:///srv/git/a/b", "", "", "", "has no host"},
		{forge.ForgeGitea, "http://127.0.0.1:3000/a/b", "ftp://x/api/v1", "", "", "scheme must be http or https"},
		{forge.ForgeGitea, "http://127.0.0.1:3000/a/b", "http://knit:pw@x/api/v1", "", "", "carries credentials"},
		{forge.ForgeGitea, "", "", "", "", "RepoURL is required"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %s %s", tc.provider, tc.repoURL, tc.apiURL), func(t *testing.T) {
			ep, err := deriveEndpoint(tc.provider, tc.repoURL, tc.apiURL)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("deriveEndpoint = %+v, %v; want an error mentioning %q", ep, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), ":pw@") {
					t.Fatalf("error shows credentials: %v", err)
				}
			case err != nil:
				t.Fatalf("deriveEndpoint: %v", err)
			case ep.base != tc.wantBase || ep.repo != tc.wantRepo:
				t.Errorf("deriveEndpoint = base %q repo %q, want %q %q", ep.base, ep.repo, tc.wantBase, tc.wantRepo)
			default:
				// Validate fills APIURL in, so validating again must agree.
				again, err := deriveEndpoint(tc.provider, tc.repoURL, ep.base)
				if err != nil || again != ep {
					t.Errorf("with APIURL %s: %+v, %v; want %+v", ep.base, again, err, ep)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	o := Options{Provider: forge.ForgeGitea, RepoURL: "http://127.0.0.1:3000/ada/hello.git", Token: testToken}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.APIURL != "http://127.0.0.1:3000/api/v1" || o.HTTPClient == nil || o.Log == nil ||
		o.Retry != (Retry{DefaultMaxAttempts, DefaultMaxElapsed, DefaultMinBackoff, DefaultMaxBackoff}) {
		t.Errorf("Validate filled %+v, retry %+v", o, o.Retry)
	}

	bad := Options{Provider: forge.ForgeGeneric, RepoURL: "https://ci:hunter2@example.com/a/b.git", Retry: Retry{MaxAttempts: -1, MinBackoff: -1}}
	err := bad.Validate()
	for _, want := range []string{`Provider "generic" has no API`, "Token is required", "Retry.MaxAttempts -1 is negative", "Retry.MinBackoff -1ns is negative", "https://ci:xxxxx@example.com/a/b.git"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to mention %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Validate error shows the password: %v", err)
	}
	if _, err := New(Options{RepoURL: "https://github.com/o/r", Token: "t"}); err == nil || !strings.Contains(err.Error(), "Provider is required") {
		t.Errorf("New without provider = %v", err)
	}
}

func TestOptionsHideTheToken(t *testing.T) {
	o := Options{Provider: forge.ForgeGitHub, RepoURL: "https://github.com/o/r.git", Token: testToken}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("forge", "options", o)
	for what, s := range map[string]string{"%v": fmt.Sprintf("%v", o), "%+v": fmt.Sprintf("%+v", o), "%s": fmt.Sprint(o), "slog": logged.String()} {
		if strings.Contains(s, testToken) {
			t.Errorf("%s shows the token: %s", what, s)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/o/r.git":                "https://github.com/o/r.git",
		"https://oauth2:glpat-x@gitlab.com/g/p.git": "https://oauth2:xxxxx@gitlab.com/g/p.git",
		"https://user:pa ss@host/a/b":               "https://xxxxx@host/a/b",
		"git@github.com:o/r.git":                    "git@github.com:o/r.git",
		"user:secret@host:o/r.git":                  "xxxxx@host:o/r.git",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
