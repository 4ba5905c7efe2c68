package forgeapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/knitops/knit/gitsync/egress"
	"github.com/knitops/knit/gitsync/forge"
)

// loopbackForge is a Gitea API on loopback counting the requests it gets.
func loopbackForge(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestEgressRefusesLoopbackForge: under knit's default policy a
// repository URL on loopback, by address or by a name resolving there,
// gets no call at all; an operator's allow rule lets it through.
func TestEgressRefusesLoopbackForge(t *testing.T) {
	srv, hits := loopbackForge(t)
	strict := func() *egress.Policy { return &egress.Policy{} }
	status := Status{Context: "knit/preview", State: StatePending}

	_, err := New(Options{Provider: forge.ForgeGitea, RepoURL: srv.URL + "/ada/hello.git", Token: testToken, Egress: strict})
	var denied *egress.DeniedError
	if !errors.As(err, &denied) {
		t.Fatalf("New on a loopback address = %v, want an egress refusal", err)
	}

	// A name passes the URL check; the dial is refused on what it resolves to.
	byName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	c, err := New(Options{Provider: forge.ForgeGitea, RepoURL: byName + "/ada/hello.git", Token: testToken, Egress: strict,
		Retry: Retry{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	err = c.SetStatus(context.Background(), sha, status)
	if !errors.As(err, &denied) {
		t.Errorf("SetStatus through localhost = %v, want an egress refusal", err)
	}
	if err := c.Merge(context.Background(), 3, sha); !errors.As(err, &denied) {
		t.Errorf("Merge through localhost = %v, want an egress refusal", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback forge got %d requests, want 0", n)
	}

	allowed := func() *egress.Policy {
		return &egress.Policy{Allow: []egress.Rule{{Prefix: netip.MustParsePrefix("127.0.0.1/32")}, {Prefix: netip.MustParsePrefix("::1/128")}}}
	}
	c, err = New(Options{Provider: forge.ForgeGitea, RepoURL: srv.URL + "/ada/hello.git", Token: testToken, Egress: allowed})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetStatus(context.Background(), sha, status); err != nil {
		t.Fatalf("SetStatus with loopback allowed: %v", err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the allowed forge got %d requests, want 1", n)
	}
}

// TestSummaryHidesTheAnswer: what is shown to the repository's users is
// knit's own words, never what the remote end wrote.
func TestSummaryHidesTheAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"root:x:0:0:root:/root:/bin/bash \u001b[31m etcd-secret-material"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{Provider: forge.ForgeGitea, RepoURL: srv.URL + "/ada/hello.git", Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	err = c.SetStatus(context.Background(), sha, Status{Context: "knit/preview", State: StatePending})
	if err == nil {
		t.Fatal("SetStatus succeeded against a 403")
	}
	s := Summary(err)
	if strings.Contains(s, "etcd-secret-material") || strings.Contains(s, "root:x") || !strings.Contains(s, "HTTP 403") {
		t.Errorf("Summary = %q: want the status and knit's words only", s)
	}
	if strings.ContainsRune(err.Error(), '\x1b') {
		t.Errorf("the logged error keeps a terminal escape: %q", err)
	}
}

// TestMergeNeedsAHead: a merge that does not pin the analysed head is
// refused before anything is sent.
func TestMergeNeedsAHead(t *testing.T) {
	for _, f := range []forge.Forge{forge.ForgeGitHub, forge.ForgeGitea, forge.ForgeGitLab} {
		s := newScript(t, f)
		c, _ := newTestClient(t, f, s, nil)
		if err := c.Merge(context.Background(), 7, ""); err == nil || !strings.Contains(err.Error(), "no head commit") {
			t.Errorf("%s: Merge without a sha = %v, want a refusal", f, err)
		}
		if n := s.requests(); n != 0 {
			t.Errorf("%s: %d requests sent, want 0", f, n)
		}
	}
}
