package forgeapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knitops/knit/gitsync/forge"
)

// testToken must never show up in an error or log.
const testToken = "tok-3f9a1c-never-print-me"

// sha is the head commit the tests report on.
const sha = "9f2b7c41d0a55e3a8c1f6e27b4d9a0c3e1f2b3c4"

// exchange is one request a forge expects and its answer.
type exchange struct {
	method string
	// path is the escaped path, as sent on the wire.
	path string
	// query is the expected query, compared as values; "" means none.
	query string
	// body is the expected JSON body, compared as JSON; "" means none.
	body   string
	status int
	// header is set on the answer; "{{URL}}" becomes the server's URL.
	header map[string]string
	reply  string
}

// script is a forge that expects exactly its exchanges, in order, each
// with the forge's authentication headers.
type script struct {
	t     *testing.T
	srv   *httptest.Server
	auth  func(http.Header) string
	mu    sync.Mutex
	steps []exchange
	n     int
}

// forgeAuth checks a request's headers as each forge's API documents them;
// it returns what is wrong, or "".
var forgeAuth = map[forge.Forge]func(http.Header) string{
	forge.ForgeGitHub: func(h http.Header) string {
		return want(h, "Authorization", "Bearer "+testToken) + want(h, "Accept", "application/vnd.github+json") +
			want(h, "X-GitHub-Api-Version", "2022-11-28")
	},
	forge.ForgeGitea: func(h http.Header) string {
		return want(h, "Authorization", "token "+testToken)
	},
	forge.ForgeGitLab: func(h http.Header) string {
		return want(h, "PRIVATE-TOKEN", testToken) + want(h, "Authorization", "")
	},
}

func want(h http.Header, k, v string) string {
	if got := h.Get(k); got != v {
		return k + " is " + strings.ReplaceAll(got, testToken, "<token>") + "; "
	}
	return ""
}

func newScript(t *testing.T, f forge.Forge, steps ...exchange) *script {
	t.Helper()
	s := &script{t: t, auth: forgeAuth[f], steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.n != len(s.steps) {
			t.Errorf("forge saw %d requests, want %d (next: %s %s)", s.n, len(s.steps), s.steps[s.n].method, s.steps[s.n].path)
		}
	})
	return s
}

func (s *script) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *script) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.n >= len(s.steps) {
		s.mu.Unlock()
		s.t.Errorf("unexpected request %s %s", r.Method, r.URL.EscapedPath())
		http.Error(w, `{"message":"unexpected"}`, http.StatusTeapot)
		return
	}
	x := s.steps[s.n]
	s.n++
	s.mu.Unlock()

	what := r.Method + " " + r.URL.EscapedPath()
	if r.Method != x.method || r.URL.EscapedPath() != x.path {
		s.t.Errorf("request %d is %s, want %s %s", s.n, what, x.method, x.path)
	}
	if problem := s.auth(r.Header); problem != "" {
		s.t.Errorf("%s: %s", what, problem)
	}
	if r.Header.Get("User-Agent") == "" {
		s.t.Errorf("%s: no User-Agent (GitHub requires one)", what)
	}
	gotQ, _ := url.ParseQuery(r.URL.RawQuery)
	wantQ, _ := url.ParseQuery(x.query)
	if len(gotQ) != 0 || len(wantQ) != 0 {
		if !reflect.DeepEqual(gotQ, wantQ) {
			s.t.Errorf("%s: query %q, want %q", what, r.URL.RawQuery, x.query)
		}
	}
	b, _ := io.ReadAll(r.Body)
	switch {
	case x.body == "" && len(b) != 0:
		s.t.Errorf("%s: body %s, want none", what, b)
	case x.body != "":
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			s.t.Errorf("%s: Content-Type %q, want application/json", what, ct)
		}
		var got, exp any
		if err := json.Unmarshal(b, &got); err != nil {
			s.t.Errorf("%s: body %s is not JSON: %v", what, b, err)
		}
		if err := json.Unmarshal([]byte(x.body), &exp); err != nil {
			s.t.Fatalf("bad test body %s: %v", x.body, err)
		}
		if !reflect.DeepEqual(got, exp) {
			s.t.Errorf("%s: body\n %s\nwant\n %s", what, b, x.body)
		}
	}
	for k, v := range x.header {
		w.Header().Set(k, strings.ReplaceAll(v, "{{URL}}", s.srv.URL))
	}
	if x.reply != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(x.status)
	_, _ = io.WriteString(w, x.reply)
}

// fakeClock is time that passes only when the retry loop sleeps.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

// epoch is where fake time starts: whole seconds, as X-RateLimit-Reset is.
var epoch = time.Date(2025, 3, 4, 9, 30, 0, 0, time.UTC)

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func (c *fakeClock) sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// newTestClient makes a Client of forge f against s the way knit will:
// from a clone URL, with APIURL only where the real host is not s.
func newTestClient(t *testing.T, f forge.Forge, s *script, mutate func(*Options)) (Client, *fakeClock) {
	t.Helper()
	fc := &fakeClock{now: epoch}
	o := Options{Provider: f, Token: testToken, clock: fc}
	switch f {
	case forge.ForgeGitHub:
		o.RepoURL, o.APIURL = "https://github.com/knitops-demo/shop.git", s.srv.URL
	case forge.ForgeGitea:
		o.RepoURL = s.srv.URL + "/ada/hello.git"
	case forge.ForgeGitLab:
		o.RepoURL = s.srv.URL + "/platform/team/payments.git"
	}
	if mutate != nil {
		mutate(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c, fc
}

// apiCase is one call of a forge table test.
type apiCase struct {
	name  string
	call  func(context.Context, Client) error
	steps []exchange
	// wantErr, when set, is a substring of the error; wantStatus, when
	// set, the *APIError's status.
	wantErr    string
	wantStatus int
}

func runAPICases(t *testing.T, f forge.Forge, cases []apiCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript(t, f, tc.steps...)
			c, fc := newTestClient(t, f, s, nil)
			err := tc.call(context.Background(), c)
			checkErr(t, err, tc.wantErr, tc.wantStatus)
			if sl := fc.sleeps(); len(sl) != 0 {
				t.Errorf("slept %v, want no retries", sl)
			}
		})
	}
}

// checkErr compares err with a wanted substring and *APIError status, and
// makes sure the token is not in it.
func checkErr(t *testing.T, err error, wantErr string, wantStatus int) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), testToken) {
		t.Fatalf("error shows the token: %v", err)
	}
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Fatalf("error %v, want one mentioning %q", err, wantErr)
	}
	if wantStatus != 0 {
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != wantStatus {
			t.Fatalf("error %v is not an *APIError with status %d", err, wantStatus)
		}
	}
}
