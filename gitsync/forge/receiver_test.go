package forge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testSecrets = map[string][]byte{
	"shop":          []byte("shop-secret"),
	"payments":      []byte("glpat-payments"),
	"blog":          []byte("blog-secret"),
	"team-a/orders": []byte("orders-secret"),
	"unsigned":      nil,
}

// recorder collects the events a Receiver delivers; fail, when set, is
// returned (once) instead of recording.
type recorder struct {
	mu     sync.Mutex
	events []Event
	fail   error
}

func (r *recorder) onEvent(_ context.Context, e Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fail; err != nil {
		r.fail = nil
		return err
	}
	r.events = append(r.events, e)
	return nil
}

func (r *recorder) got() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

func newTestServer(t *testing.T, mutate func(*Options)) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	opts := Options{
		Secret: func(_ context.Context, repo string) ([]byte, error) {
			if repo == "broken" {
				return nil, errors.New("secret store unavailable")
			}
			s, ok := testSecrets[repo]
			if !ok {
				return nil, fmt.Errorf("GitRepository %q: %w", repo, ErrRepoNotFound)
			}
			return s, nil
		},
		OnEvent: rec.onEvent,
	}
	if mutate != nil {
		mutate(&opts)
	}
	r, err := NewReceiver(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv, rec
}

// post sends a webhook and returns the status and body of the answer.
func post(t *testing.T, url string, headers map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestReceiverDeliversEachForge(t *testing.T) {
	srv, rec := newTestServer(t, nil)
	githubPush := []byte(testdata(t, "github-push.json"))
	gitlabMR := []byte(testdata(t, "gitlab-merge_request.json"))
	giteaPR := []byte(testdata(t, "gitea-pull_request.json"))
	generic := []byte(`{"kind":"push","repo":"team-a/orders","branch":"main","sha":"abc123","author":"ci"}`)

	cases := []struct {
		name    string
		path    string
		headers map[string]string
		body    []byte
		want    Event
	}{
		{"github push", "/hooks/github/shop", map[string]string{
			"X-GitHub-Event": "push", "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
			"X-Hub-Signature-256": SignHMACSHA256(testSecrets["shop"], githubPush),
		}, githubPush, Event{
			Kind: KindPush, Forge: ForgeGitHub, Repo: "shop", ForgeRepo: "knitops-demo/shop", Delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
			Ref: "refs/heads/main", Branch: "main", Before: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
			After: "a10867b14bb761a232cd80139fbd4c0d33264240", Message: "Speed up checkout\n\nBatch the stock lookups.", Author: "alice-dev",
		}},
		{"gitlab merge request", "/hooks/gitlab/payments", map[string]string{
			"X-Gitlab-Event": "Merge Request Hook", "X-Gitlab-Event-UUID": "13792a34-cac6-4fda-95a8-c58e00a3954e",
			"X-Gitlab-Token": string(testSecrets["payments"]),
		}, gitlabMR, Event{
			Kind: KindPullRequest, Forge: ForgeGitLab, Repo: "payments", ForgeRepo: "platform/payments", Delivery: "13792a34-cac6-4fda-95a8-c58e00a3954e",
			Number: 12, Action: ActionSynchronize, HeadBranch: "retry-auth", HeadSHA: "c0ffee1234567890abcdef1234567890abcdef12",
			BaseBranch: "main", Title: "Retry card authorisations", Body: "Adds a bounded retry.", Author: "frank",
		}},
		{"gitea pull request", "/hooks/gitea/blog", map[string]string{
			"X-Gitea-Event": "pull_request", "X-Gitea-Delivery": "f6266f16-1bf3-46a5-9ea4-602e06ead473",
			"X-Gitea-Signature": strings.TrimPrefix(SignHMACSHA256(testSecrets["blog"], giteaPR), "sha256="),
		}, giteaPR, Event{
			Kind: KindPullRequest, Forge: ForgeGitea, Repo: "blog", ForgeRepo: "team/blog", Delivery: "f6266f16-1bf3-46a5-9ea4-602e06ead473",
			Number: 5, Action: ActionClosed, Merged: true, HeadBranch: "dark-theme", HeadSHA: "e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5e",
			BaseBranch: "main", Title: "Dark theme", Author: "hank",
		}},
		{"generic push to namespaced repo", "/hooks/generic/team-a/orders", map[string]string{
			"X-Knit-Delivery": "ci-run-981", "X-Knit-Signature-256": SignHMACSHA256(testSecrets["team-a/orders"], generic),
		}, generic, Event{
			Kind: KindPush, Forge: ForgeGeneric, Repo: "team-a/orders", Delivery: "ci-run-981",
			Ref: "refs/heads/main", Branch: "main", After: "abc123", Author: "ci",
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, srv.URL+tc.path, tc.headers, tc.body)
			if status != http.StatusOK || !strings.HasPrefix(body, "ok:") {
				t.Fatalf("POST %s = %d %q, want 200 ok", tc.path, status, body)
			}
			got := rec.got()
			if len(got) != i+1 {
				t.Fatalf("%d events delivered, want %d", len(got), i+1)
			}
			if diff := cmp.Diff(tc.want, got[i], ignoreNewFields); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReceiverRejects(t *testing.T) {
	body := []byte(testdata(t, "github-push.json"))
	good := SignHMACSHA256(testSecrets["shop"], body)
	gh := func(sig string) map[string]string {
		h := map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "d-1"}
		if sig != "" {
			h["X-Hub-Signature-256"] = sig
		}
		return h
	}
	cases := []struct {
		name       string
		path       string
		headers    map[string]string
		body       []byte
		wantStatus int
		wantBody   string
	}{
		{"missing signature", "/hooks/github/shop", gh(""), body, http.StatusUnauthorized, "missing signature"},
		{"wrong signature", "/hooks/github/shop", gh(SignHMACSHA256([]byte("guess"), body)), body, http.StatusUnauthorized, "does not match"},
		{"signature of another body", "/hooks/github/shop", gh(good), append([]byte(" "), body...), http.StatusUnauthorized, "does not match"},
		{"another repo's secret", "/hooks/github/blog", gh(good), body, http.StatusUnauthorized, "does not match"},
		{"gitlab wrong token", "/hooks/gitlab/payments", map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "nope"}, body, http.StatusUnauthorized, "X-Gitlab-Token"},
		{"gitea missing signature", "/hooks/gitea/blog", map[string]string{"X-Gitea-Event": "push"}, body, http.StatusUnauthorized, "X-Gitea-Signature"},
		{"generic github header", "/hooks/generic/shop", map[string]string{"X-Hub-Signature-256": good}, body, http.StatusUnauthorized, "X-Knit-Signature-256"},
		{"unknown repo", "/hooks/github/nope", gh(good), body, http.StatusUnauthorized, "does not match"},
		{"unknown forge", "/hooks/bitbucket/shop", gh(good), body, http.StatusNotFound, `unknown forge "bitbucket"`},
		{"no repo", "/hooks/github/", gh(good), body, http.StatusNotFound, "missing repository"},
		{"no secret configured", "/hooks/github/unsigned", gh(good), body, http.StatusUnauthorized, "does not match"},
		{"secret lookup fails", "/hooks/github/broken", gh(good), body, http.StatusInternalServerError, "looking up"},
		{"malformed json", "/hooks/github/shop", gh(SignHMACSHA256(testSecrets["shop"], []byte(`{"ref":`))), []byte(`{"ref":`), http.StatusBadRequest, "malformed github push payload"},
	}
	srv, rec := newTestServer(t, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, got := post(t, srv.URL+tc.path, tc.headers, tc.body)
			if status != tc.wantStatus || !strings.Contains(got, tc.wantBody) {
				t.Errorf("POST %s = %d %q, want %d containing %q", tc.path, status, got, tc.wantStatus, tc.wantBody)
			}
		})
	}
	if got := rec.got(); len(got) != 0 {
		t.Errorf("rejected webhooks delivered %d events: %+v", len(got), got)
	}
}

func TestReceiverMethodNotAllowed(t *testing.T) {
	srv, _ := newTestServer(t, nil)
	resp, err := http.Get(srv.URL + "/hooks/github/shop")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d, want 405", resp.StatusCode)
	}
}

func TestReceiverBodyLimit(t *testing.T) {
	srv, rec := newTestServer(t, func(o *Options) { o.MaxBodyBytes = 1024 })
	small := []byte(`{"kind":"push","branch":"main","sha":"abc"}`)
	big := []byte(`{"kind":"push","branch":"main","sha":"abc","message":"` + strings.Repeat("x", 2048) + `"}`)
	sign := func(b []byte) map[string]string {
		return map[string]string{"X-Knit-Signature-256": SignHMACSHA256(testSecrets["shop"], b)}
	}
	if status, body := post(t, srv.URL+"/hooks/generic/shop", sign(big), big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversize body = %d %q, want 413", status, body)
	}

	// Without a Content-Length the limit still holds while reading.
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/hooks/generic/shop", io.MultiReader(bytes.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Header.Set("X-Knit-Signature-256", sign(big)["X-Knit-Signature-256"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversize chunked body = %d, want 413", resp.StatusCode)
	}
	if got := rec.got(); len(got) != 0 {
		t.Fatalf("oversize bodies delivered %d events", len(got))
	}

	if status, body := post(t, srv.URL+"/hooks/generic/shop", sign(small), small); status != http.StatusOK {
		t.Errorf("small body = %d %q, want 200", status, body)
	}
}

func TestReceiverDuplicateDelivery(t *testing.T) {
	srv, rec := newTestServer(t, nil)
	body := []byte(testdata(t, "github-push.json"))
	headers := map[string]string{
		"X-GitHub-Event": "push", "X-GitHub-Delivery": "dup-1",
		"X-Hub-Signature-256": SignHMACSHA256(testSecrets["shop"], body),
	}
	if status, got := post(t, srv.URL+"/hooks/github/shop", headers, body); status != http.StatusOK {
		t.Fatalf("first delivery = %d %q", status, got)
	}
	status, got := post(t, srv.URL+"/hooks/github/shop", headers, body)
	if status != http.StatusOK || !strings.Contains(got, "duplicate delivery ignored") {
		t.Errorf("redelivery = %d %q, want 200 duplicate delivery ignored", status, got)
	}
	if n := len(rec.got()); n != 1 {
		t.Errorf("%d events delivered, want 1", n)
	}

	// The delivery id is not signed: a replay of the same body under a new
	// id, or none, is the same delivery.
	for _, id := range []string{"dup-2", ""} {
		headers["X-GitHub-Delivery"] = id
		if status, got := post(t, srv.URL+"/hooks/github/shop", headers, body); status != http.StatusOK || !strings.Contains(got, "duplicate") {
			t.Errorf("replay under delivery id %q = %d %q, want 200 duplicate delivery ignored", id, status, got)
		}
	}
	if n := len(rec.got()); n != 1 {
		t.Errorf("%d events delivered, want 1", n)
	}
}

// TestReceiverRedeliveryAfterFailure: a delivery OnEvent failed is not
// remembered, so the forge's redelivery (same id) is handled.
func TestReceiverRedeliveryAfterFailure(t *testing.T) {
	srv, rec := newTestServer(t, nil)
	rec.fail = errors.New("apiserver unavailable")
	body := []byte(testdata(t, "gitlab-push.json"))
	headers := map[string]string{
		"X-Gitlab-Event": "Push Hook", "X-Gitlab-Event-UUID": "retry-1", "X-Gitlab-Token": string(testSecrets["payments"]),
	}
	status, got := post(t, srv.URL+"/hooks/gitlab/payments", headers, body)
	if status != http.StatusInternalServerError || !strings.Contains(got, "apiserver unavailable") {
		t.Fatalf("failing handler = %d %q, want 500 with the error", status, got)
	}
	if status, got := post(t, srv.URL+"/hooks/gitlab/payments", headers, body); status != http.StatusOK || strings.Contains(got, "duplicate") {
		t.Fatalf("redelivery = %d %q, want 200 handled", status, got)
	}
	if n := len(rec.got()); n != 1 {
		t.Errorf("%d events delivered, want 1", n)
	}
}

func TestReceiverIgnored(t *testing.T) {
	srv, rec := newTestServer(t, nil)
	ping := []byte(testdata(t, "github-ping.json"))
	status, got := post(t, srv.URL+"/hooks/github/shop", map[string]string{
		"X-GitHub-Event": "ping", "X-GitHub-Delivery": "p-1", "X-Hub-Signature-256": SignHMACSHA256(testSecrets["shop"], ping),
	}, ping)
	if status != http.StatusOK || !strings.Contains(got, "pong") {
		t.Errorf("ping = %d %q, want 200 pong", status, got)
	}
	issues := []byte(`{"action":"opened","issue":{"number":1}}`)
	status, got = post(t, srv.URL+"/hooks/github/shop", map[string]string{
		"X-GitHub-Event": "issues", "X-Hub-Signature-256": SignHMACSHA256(testSecrets["shop"], issues),
	}, issues)
	if status != http.StatusAccepted || !strings.Contains(got, "ignored") {
		t.Errorf("issues = %d %q, want 202 ignored", status, got)
	}
	// A ping with a bad signature is still refused.
	status, _ = post(t, srv.URL+"/hooks/github/shop", map[string]string{"X-GitHub-Event": "ping", "X-Hub-Signature-256": "sha256=00"}, ping)
	if status != http.StatusUnauthorized {
		t.Errorf("unsigned ping = %d, want 401", status)
	}
	if n := len(rec.got()); n != 0 {
		t.Errorf("%d events delivered, want 0", n)
	}
}

func TestReceiverPathPrefix(t *testing.T) {
	srv, rec := newTestServer(t, func(o *Options) { o.PathPrefix = "/knit/webhooks/" })
	body := []byte(`{"kind":"push","branch":"main","sha":"abc"}`)
	h := map[string]string{"X-Knit-Signature-256": SignHMACSHA256(testSecrets["shop"], body)}
	if status, _ := post(t, srv.URL+"/hooks/generic/shop", h, body); status != http.StatusNotFound {
		t.Errorf("default prefix = %d, want 404", status)
	}
	if status, got := post(t, srv.URL+"/knit/webhooks/generic/shop", h, body); status != http.StatusOK {
		t.Errorf("custom prefix = %d %q, want 200", status, got)
	}
	if n := len(rec.got()); n != 1 {
		t.Errorf("%d events delivered, want 1", n)
	}
}
