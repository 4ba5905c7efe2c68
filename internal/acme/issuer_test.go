package acme

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNormalizeHosts(t *testing.T) {
	cases := []struct {
		name  string
		hosts []string
		want  []string
		err   string
	}{
		{"lower case, trailing dot, duplicates", []string{"Hello.Example.COM.", "hello.example.com", " www.example.com "},
			[]string{"hello.example.com", "www.example.com"}, ""},
		{"order kept", []string{"b.example", "a.example"}, []string{"b.example", "a.example"}, ""},
		{"none", nil, nil, "no hosts"},
		{"empty", []string{"a.example", " "}, nil, "empty host name"},
		{"wildcard", []string{"*.example.com"}, nil, "certificate for *.example.com refused: a wildcard name can only be validated over DNS-01"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := normalizeHosts(tc.hosts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("normalizeHosts = %v, %v; want an error saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("normalizeHosts = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	var e *Error
	if _, err := normalizeHosts([]string{"*.example.com"}); !errors.As(err, &e) || e.Reason != ReasonRejected || e.Host != "*.example.com" {
		t.Errorf("a wildcard: %#v, want a Rejected *Error for it", err)
	}
}

func TestRetryBackoff(t *testing.T) {
	res := func(code int, retryAfter string) *http.Response {
		r := &http.Response{StatusCode: code, Header: http.Header{}}
		if retryAfter != "" {
			r.Header.Set("Retry-After", retryAfter)
		}
		return r
	}
	cases := []struct {
		name string
		n    int
		res  *http.Response
		want time.Duration
	}{
		{"rate limited: no retry, whatever Retry-After says", 1, res(429, "1"), 0},
		{"bad nonce: at once", 1, res(400, ""), time.Millisecond},
		{"server error, first retry", 1, res(503, ""), time.Second},
		{"server error, third retry", 3, res(500, ""), 4 * time.Second},
		{"server error, last retry", maxRetries, res(502, ""), 8 * time.Second},
		{"server error, out of retries", maxRetries + 1, res(500, ""), 0},
		{"short Retry-After is honoured", 1, res(503, "5"), 5 * time.Second},
		{"long Retry-After: give up and say so", 1, res(503, "3600"), 0},
	}
	for _, tc := range cases {
		if got := retryBackoff(tc.n, nil, tc.res); got != tc.want {
			t.Errorf("%s: retryBackoff = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestObtainSaysWhyTheCAIsOfNoUse points Obtain at directories that fail
// before any signed request: no JOSE is needed to answer them.
func TestObtainSaysWhyTheCAIsOfNoUse(t *testing.T) {
	closed := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		return "http://" + addr + "/dir"
	}
	answering := func(code int, header, body string) func(t *testing.T) string {
		return func(t *testing.T) string {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if k, v, ok := strings.Cut(header, ": "); ok {
					w.Header().Set(k, v)
				}
				w.WriteHeader(code)
				_, _ = io.WriteString(w, body)
			}))
			t.Cleanup(srv.Close)
			return srv.URL + "/dir"
		}
	}
	untrusted := func(t *testing.T) string {
		srv := httptest.NewUnstartedServer(http.NotFoundHandler())
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv.URL + "/dir"
	}
	cases := []struct {
		name       string
		directory  func(t *testing.T) string
		reason     string
		detail     string
		retryAfter time.Duration
	}{
		{"rate limited", answering(http.StatusTooManyRequests, "Retry-After: 3600",
			`{"type":"urn:ietf:params:acme:error:rateLimited","detail":"too many requests from this IP","status":429}`),
			ReasonRateLimited, "too many requests from this IP", time.Hour},
		{"down for maintenance", answering(http.StatusServiceUnavailable, "Retry-After: 600", "<html>back soon</html>"),
			ReasonCAUnreachable, "back soon", 10 * time.Minute},
		{"not an ACME server", answering(http.StatusNotFound, "", "404 page not found"),
			ReasonCAUnreachable, "404 page not found", 0},
		{"nothing listening", closed, ReasonCAUnreachable, "connection refused", 0},
		{"certificate not trusted", untrusted, ReasonCAUnreachable, "certificate", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := NewAccountKey()
			if err != nil {
				t.Fatal(err)
			}
			iss := &Issuer{DirectoryURL: tc.directory(t), Key: key, HTTPClient: &http.Client{Timeout: 10 * time.Second}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			began := time.Now()
			_, err = iss.Obtain(ctx, []string{"a.example"}, nopSolver{})
			if took := time.Since(began); took > 5*time.Second {
				t.Errorf("Obtain took %s: it waited instead of saying", took)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Obtain = %v, want an *Error", err)
			}
			t.Logf("message: %s", e)
			if e.Reason != tc.reason || !strings.Contains(e.Detail, tc.detail) || e.RetryAfter != tc.retryAfter {
				t.Errorf("got {%s %q %s}, want {%s, a detail saying %q, %s}", e.Reason, e.Detail, e.RetryAfter, tc.reason, tc.detail, tc.retryAfter)
			}
		})
	}
}

func TestObtainChecksItsConfiguration(t *testing.T) {
	key, _ := NewAccountKey()
	cases := []struct {
		name string
		iss  Issuer
		s    Solver
		err  string
	}{
		{"no directory", Issuer{Key: key}, nopSolver{}, "DirectoryURL is empty"},
		{"no key", Issuer{DirectoryURL: "https://ca.example/dir"}, nopSolver{}, "Key is nil"},
		{"no solver", Issuer{DirectoryURL: "https://ca.example/dir", Key: key}, nil, "no Solver"},
	}
	for _, tc := range cases {
		if _, err := tc.iss.Obtain(context.Background(), []string{"a.example"}, tc.s); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: Obtain = %v, want an error saying %q", tc.name, err, tc.err)
		}
	}
}

func TestCertificateFormatsWithoutItsKey(t *testing.T) {
	key, _ := NewAccountKey()
	keyPEM, _ := MarshalKey(key)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := Certificate{Hosts: []string{"a.example", "b.example"}, ChainPEM: []byte("chain"), KeyPEM: keyPEM, NotBefore: t0, NotAfter: t0.Add(time.Hour)}
	want := "certificate for a.example, b.example valid 2026-01-01T00:00:00Z to 2026-01-01T01:00:00Z"
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{c, &c} {
			if got := fmt.Sprintf(verb, v); got != want {
				t.Errorf("Sprintf(%q, %T) = %.80q…, want %q", verb, v, got, want)
			}
		}
	}
}

type nopSolver struct{}

func (nopSolver) Present(context.Context, string, string, string) error { return nil }
func (nopSolver) CleanUp(context.Context, string, string) error         { return nil }
