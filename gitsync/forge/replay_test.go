package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReceiverRefusesOtherRepository: a verified delivery whose payload
// is for another repository than the GitRepository's URL is refused with
// 403 and not delivered; the matching one is.
func TestReceiverRefusesOtherRepository(t *testing.T) {
	urls := map[string]string{"shop": "https://github.com/knitops-demo/shop.git", "blog": "git@gitea.example.com:someone/else.git"}
	srv, rec := newTestServer(t, func(o *Options) {
		o.RepoURL = func(_ context.Context, repo string) (string, error) { return urls[repo], nil }
	})
	push := []byte(testdata(t, "github-push.json"))
	status, got := post(t, srv.URL+"/hooks/github/shop", map[string]string{
		"X-GitHub-Event": "push", "X-GitHub-Delivery": "m-1", "X-Hub-Signature-256": SignHMACSHA256(testSecrets["shop"], push),
	}, push)
	if status != http.StatusOK {
		t.Fatalf("matching repository = %d %q, want 200", status, got)
	}
	pr := []byte(testdata(t, "gitea-pull_request.json")) // for team/blog
	status, got = post(t, srv.URL+"/hooks/gitea/blog", map[string]string{
		"X-Gitea-Event": "pull_request", "X-Gitea-Delivery": "m-2",
		"X-Gitea-Signature": strings.TrimPrefix(SignHMACSHA256(testSecrets["blog"], pr), "sha256="),
	}, pr)
	if status != http.StatusForbidden || !strings.Contains(got, "another repository") {
		t.Errorf("other repository = %d %q, want 403", status, got)
	}
	if n := len(rec.got()); n != 1 {
		t.Errorf("%d events delivered, want 1 (the matching one)", n)
	}
}

func TestMatchRepository(t *testing.T) {
	cases := []struct {
		forgeRepo, url string
		ok             bool
	}{
		{"knitops-demo/shop", "https://github.com/knitops-demo/shop.git", true},
		{"Knitops-Demo/Shop", "https://github.com/knitops-demo/shop", true},
		{"group/sub/app", "https://example.com/gitlab/group/sub/app.git", true},
		{"ada/hello", "git@gitea.example.com:ada/hello.git", true},
		{"ada/hello", "ssh://git@gitea.example.com:2222/ada/hello.git", true},
		{"mallory/hello", "https://gitea.example.com/ada/hello.git", false},
		{"da/hello", "https://gitea.example.com/ada/hello.git", false},
		{"", "https://gitea.example.com/ada/hello.git", false},
		{"ada/hello", "", false},
	}
	for _, tc := range cases {
		err := MatchRepository(tc.forgeRepo, tc.url)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrRepoMismatch)) {
			t.Errorf("MatchRepository(%q, %q) = %v, want ok=%v", tc.forgeRepo, tc.url, err, tc.ok)
		}
	}
}

// TestReceiverStaleEvent: an event OnEvent finds older than the recorded
// one is answered 409, and its replays are duplicates.
func TestReceiverStaleEvent(t *testing.T) {
	srv, rec := newTestServer(t, nil)
	rec.fail = fmt.Errorf("pull request #5: %w", ErrStale)
	pr := []byte(testdata(t, "gitea-pull_request.json"))
	h := map[string]string{"X-Gitea-Event": "pull_request", "X-Gitea-Signature": strings.TrimPrefix(SignHMACSHA256(testSecrets["blog"], pr), "sha256=")}
	if status, got := post(t, srv.URL+"/hooks/gitea/blog", h, pr); status != http.StatusConflict {
		t.Errorf("stale event = %d %q, want 409", status, got)
	}
	if status, got := post(t, srv.URL+"/hooks/gitea/blog", h, pr); status != http.StatusOK || !strings.Contains(got, "duplicate") {
		t.Errorf("its replay = %d %q, want 200 duplicate", status, got)
	}
	if n := len(rec.got()); n != 0 {
		t.Errorf("%d events recorded, want 0", n)
	}
}

// TestGitLabSignedWebhooks: with a signing secret, GitLab deliveries need
// a Standard Webhooks signature within the timestamp window; the static
// token alone, a wrong signature or an old timestamp is 401, and a replay
// inside the window is a duplicate.
func TestGitLabSignedWebhooks(t *testing.T) {
	secret := []byte(SigningSecretPrefix + "c2lnbmluZy1rZXktZm9yLXRlc3RzLW9ubHk=")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	srv, rec := newTestServer(t, func(o *Options) {
		o.Secret = func(context.Context, string) ([]byte, error) { return secret, nil }
		o.Now = func() time.Time { return now }
	})
	body := []byte(testdata(t, "gitlab-push.json"))
	url := srv.URL + "/hooks/gitlab/payments"
	signed := func(id string, ts time.Time, b []byte) map[string]string {
		return map[string]string{"X-Gitlab-Event": "Push Hook", "webhook-id": id,
			"webhook-timestamp": strconv.FormatInt(ts.Unix(), 10), "webhook-signature": SignStandardWebhook(secret, id, ts, b)}
	}
	tokenOnly := map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": string(secret)}
	if status, got := post(t, url, tokenOnly, body); status != http.StatusUnauthorized {
		t.Errorf("token alone = %d %q, want 401", status, got)
	}
	old := signed("msg-old", now.Add(-SignatureTolerance-time.Minute), body)
	if status, got := post(t, url, old, body); status != http.StatusUnauthorized || !strings.Contains(got, "window") {
		t.Errorf("old timestamp = %d %q, want 401 outside the window", status, got)
	}
	forged := signed("msg-1", now, body)
	forged["webhook-id"] = "msg-2" // the id is signed
	if status, got := post(t, url, forged, body); status != http.StatusUnauthorized {
		t.Errorf("changed id = %d %q, want 401", status, got)
	}
	good := signed("msg-1", now, body)
	if status, got := post(t, url, good, body); status != http.StatusOK {
		t.Fatalf("signed delivery = %d %q, want 200", status, got)
	}
	if status, got := post(t, url, good, body); status != http.StatusOK || !strings.Contains(got, "duplicate") {
		t.Errorf("replay = %d %q, want 200 duplicate", status, got)
	}
	if n := len(rec.got()); n != 1 {
		t.Errorf("%d events delivered, want 1", n)
	}
}

// TestParseProvenance: where the head lives and when the pull request
// last changed, failing closed when the payload does not say.
func TestParseProvenance(t *testing.T) {
	gh, gitea, gl := testdata(t, "github-pull_request.json"), testdata(t, "gitea-pull_request.json"), testdata(t, "gitlab-merge_request.json")
	cases := []struct {
		name     string
		forge    Forge
		headers  map[string]string
		body     string
		fork     bool
		headRepo string
	}{
		{"github same repository", ForgeGitHub, map[string]string{"X-GitHub-Event": "pull_request"}, gh, false, "knitops-demo/shop"},
		{"github head repository deleted", ForgeGitHub, map[string]string{"X-GitHub-Event": "pull_request"},
			strings.Replace(gh, `"repo": {"id": 708401977, "name": "shop", "full_name": "knitops-demo/shop", "private": false}
    },
    "base"`, `"repo": null
    },
    "base"`, 1), true, ""},
		{"gitea same repository", ForgeGitea, map[string]string{"X-Gitea-Event": "pull_request"}, gitea, false, "team/blog"},
		{"gitea head says nothing", ForgeGitea, map[string]string{"X-Gitea-Event": "pull_request"},
			inHead(gitea, func(h string) string {
				return strings.Replace(strings.Replace(h, `"repo_id": 31,`, ``, 1), `"repo": {"id": 31, "name": "blog", "full_name": "team/blog"}`, `"repo": null`, 1)
			}), true, ""},
		{"gitea same id, other name", ForgeGitea, map[string]string{"X-Gitea-Event": "pull_request"},
			inHead(gitea, func(h string) string {
				return strings.Replace(h, `"full_name": "team/blog"`, `"full_name": "mallory/blog"`, 1)
			}), true, "mallory/blog"},
		{"gitlab without source project", ForgeGitLab, map[string]string{"X-Gitlab-Event": "Merge Request Hook"},
			strings.Replace(gl, `"source_project_id": 15`, `"source_project_id": 0`, 1), true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			e, err := forges[tc.forge].parse(h, []byte(tc.body), "shop")
			if err != nil {
				t.Fatal(err)
			}
			if e.Fork != tc.fork || e.HeadRepo != tc.headRepo {
				t.Errorf("fork, head repo = %v, %q; want %v, %q", e.Fork, e.HeadRepo, tc.fork, tc.headRepo)
			}
			if e.UpdatedAt.IsZero() {
				t.Errorf("UpdatedAt not read")
			}
		})
	}
}

// inHead applies edit to the part of a Gitea payload from its head on.
func inHead(payload string, edit func(string) string) string {
	before, after, _ := strings.Cut(payload, `"head": {`)
	return before + `"head": {` + edit(after)
}
