package forgeapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knitops/knit/gitsync/forge"
)

// retryCall is the call the retry tests make: a status, whose POST is
// the same on every attempt.
func retryCall(ctx context.Context, c Client) error {
	return c.SetStatus(ctx, sha, Status{Context: "knit/preview", State: StateSuccess})
}

func TestRetries(t *testing.T) {
	const path = "/repos/knitops-demo/shop/statuses/" + sha
	body := `{"state":"success","context":"knit/preview"}`
	ok := exchange{method: "POST", path: path, body: body, status: 201, reply: githubStatusReply}
	fail := func(status int, header map[string]string, reply string) exchange {
		return exchange{method: "POST", path: path, body: body, status: status, header: header, reply: reply}
	}
	unix := func(d time.Duration) string { return strconv.FormatInt(epoch.Add(d).Unix(), 10) }
	cases := []struct {
		name  string
		retry Retry
		steps []exchange
		// wantSleeps are the waits, exactly; wantBackoffs counts waits
		// that are jittered backoffs, checked by range instead.
		wantSleeps   []time.Duration
		wantBackoffs int
		wantErr      string
		wantStatus   int
		wantReset    time.Duration // of a *RateLimitError, from epoch
	}{
		{name: "503 then success", steps: []exchange{fail(503, nil, `{"message":"Service Unavailable"}`), ok}, wantBackoffs: 1},
		{name: "502, 504 then success", steps: []exchange{fail(502, nil, "<html>Bad Gateway</html>"), fail(504, nil, ""), ok}, wantBackoffs: 2},
		{name: "429 honours Retry-After", steps: []exchange{fail(429, map[string]string{"Retry-After": "1"}, `{"message":"Too Many Requests"}`), ok},
			wantSleeps: []time.Duration{time.Second}},
		{name: "503 honours Retry-After as a date", steps: []exchange{
			fail(503, map[string]string{"Retry-After": epoch.Add(7 * time.Second).Format(http.TimeFormat)}, ""), ok},
			wantSleeps: []time.Duration{7 * time.Second}},
		{name: "GitHub primary rate limit waited out until its reset", steps: []exchange{
			fail(403, map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": unix(30 * time.Second), "X-RateLimit-Resource": "core"},
				`{"message":"API rate limit exceeded for user ID 41898282.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`),
			ok}, wantSleeps: []time.Duration{30 * time.Second}},
		{name: "GitHub secondary rate limit with Retry-After", steps: []exchange{
			fail(403, map[string]string{"Retry-After": "20"}, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`), ok},
			wantSleeps: []time.Duration{20 * time.Second}},
		{name: "rate limit resetting beyond the budget fails at once", steps: []exchange{
			fail(403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": unix(2 * time.Hour)}, `{"message":"API rate limit exceeded"}`)},
			wantErr: "rate limited until 2025-03-04T11:30:00Z", wantStatus: 403, wantReset: 2 * time.Hour},
		{name: "Retry-After beyond the budget fails at once", steps: []exchange{fail(429, map[string]string{"Retry-After": "120"}, `{"message":"slow down"}`)},
			wantErr: `HTTP 429: "slow down"`, wantStatus: 429, wantReset: 2 * time.Minute},
		{name: "retries exhausted", retry: Retry{MaxAttempts: 3},
			steps:        []exchange{fail(502, nil, ""), fail(502, nil, ""), fail(502, nil, `{"message":"Server Error"}`)},
			wantBackoffs: 2, wantErr: `giving up after 3 attempts: github API POST ` + path + `: HTTP 502: "Server Error"`, wantStatus: 502},
		{name: "404 fails at once", steps: []exchange{fail(404, nil, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)},
			wantErr: `HTTP 404: "Not Found"`, wantStatus: 404},
		{name: "403 without a rate limit fails at once", steps: []exchange{fail(403, nil, `{"message":"Resource not accessible by integration"}`)},
			wantErr: `HTTP 403: "Resource not accessible by integration"`, wantStatus: 403},
		{name: "401 fails at once", steps: []exchange{fail(401, nil, `{"message":"Bad credentials"}`)},
			wantErr: `HTTP 401: "Bad credentials"`, wantStatus: 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript(t, forge.ForgeGitHub, tc.steps...)
			c, fc := newTestClient(t, forge.ForgeGitHub, s, func(o *Options) { o.Retry = tc.retry })
			err := retryCall(context.Background(), c)
			checkErr(t, err, tc.wantErr, tc.wantStatus)
			sleeps := fc.sleeps()
			if tc.wantBackoffs > 0 {
				if len(sleeps) != tc.wantBackoffs {
					t.Fatalf("slept %v, want %d backoffs", sleeps, tc.wantBackoffs)
				}
				for i, d := range sleeps {
					full := min(DefaultMinBackoff<<i, DefaultMaxBackoff)
					if d < full/2 || d > full {
						t.Errorf("backoff %d is %s, want within [%s, %s]", i+1, d, full/2, full)
					}
				}
			} else if !reflect.DeepEqual(sleeps, tc.wantSleeps) {
				t.Errorf("slept %v, want %v", sleeps, tc.wantSleeps)
			}
			var rl *RateLimitError
			if got := errors.As(err, &rl); got != (tc.wantReset != 0) {
				t.Fatalf("error %v: is *RateLimitError %v, want %v", err, got, tc.wantReset != 0)
			}
			if rl != nil && !rl.Reset.Equal(epoch.Add(tc.wantReset)) {
				t.Errorf("RateLimitError.Reset = %s, want %s", rl.Reset, epoch.Add(tc.wantReset))
			}
		})
	}
}

func TestRetryNetworkError(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.(*net.TCPConn).SetLinger(0) // reset, not a clean close
			conn.Close()
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(gitlabStatusReply))
	}))
	defer srv.Close()
	fc := &fakeClock{now: epoch}
	c, err := New(Options{Provider: forge.ForgeGitLab, RepoURL: srv.URL + "/platform/payments.git", Token: testToken, clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	if err := retryCall(context.Background(), c); err != nil {
		t.Fatalf("SetStatus after a dropped connection: %v", err)
	}
	if calls.Load() != 2 || len(fc.sleeps()) != 1 {
		t.Errorf("%d calls, slept %v; want 2 calls and one backoff", calls.Load(), fc.sleeps())
	}
}

func TestCancelledContextIsNotRetried(t *testing.T) {
	s := newScript(t, forge.ForgeGitHub)
	c, fc := newTestClient(t, forge.ForgeGitHub, s, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := retryCall(ctx, c)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("SetStatus with a cancelled context = %v, want context.Canceled", err)
	}
	if len(fc.sleeps()) != 0 || s.requests() != 0 {
		t.Errorf("slept %v, %d requests; want neither", fc.sleeps(), s.requests())
	}
}

// TestTokenStaysOnTheForge follows a redirect off the API's host: GitLab's
// PRIVATE-TOKEN is a header Go would forward, so the Client must refuse.
func TestTokenStaysOnTheForge(t *testing.T) {
	var leaked atomic.Bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, testToken) {
					leaked.Store(true)
				}
			}
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer elsewhere.Close()
	var calls atomic.Int32
	forgeSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		// Another port is another host as far as the token is concerned.
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer forgeSrv.Close()
	c, err := New(Options{Provider: forge.ForgeGitLab, RepoURL: forgeSrv.URL + "/platform/payments.git", Token: testToken, clock: &fakeClock{now: epoch}})
	if err != nil {
		t.Fatal(err)
	}
	err = retryCall(context.Background(), c)
	if !errors.Is(err, errCrossHostRedirect) {
		t.Fatalf("SetStatus redirected elsewhere = %v, want errCrossHostRedirect", err)
	}
	if leaked.Load() {
		t.Fatal("the token reached another host")
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls, want 1: a refused redirect is not retried", calls.Load())
	}
}

func TestBackoffDoublesToItsCap(t *testing.T) {
	r := Retry{MinBackoff: time.Second, MaxBackoff: 5 * time.Second}
	for n, full := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		for range 20 {
			if d := r.backoff(n + 1); d < full/2 || d > full {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", n+1, d, full/2, full)
			}
		}
	}
}
