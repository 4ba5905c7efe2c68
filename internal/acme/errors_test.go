package acme

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"
)

const problemNS = "urn:ietf:params:acme:error:"

func problem(typ, detail string) *xacme.Error {
	return &xacme.Error{StatusCode: http.StatusForbidden, ProblemType: problemNS + typ, Detail: detail}
}

func TestClassify(t *testing.T) {
	limited := problem("rateLimited", "too many certificates (5) already issued for this exact set of identifiers")
	limited.StatusCode = http.StatusTooManyRequests
	limited.Header = http.Header{"Retry-After": {"3600"}}
	rejected := problem("rejectedIdentifier", "Cannot issue for 2 identifiers")
	rejected.Subproblems = []xacme.Subproblem{
		{Type: problemNS + "rejectedIdentifier", Detail: "no", Identifier: nil},
		{Type: problemNS + "rejectedIdentifier", Detail: "forbidden", Identifier: &xacme.AuthzID{Type: "dns", Value: "bank.example"}},
	}
	unavailable := &xacme.Error{StatusCode: http.StatusServiceUnavailable, Detail: "<html>maintenance</html>", Header: http.Header{"Retry-After": {"120"}}}
	mine := &Error{Reason: ReasonRejected, Host: "x.example", Detail: "mine"}

	cases := []struct {
		name       string
		err        error
		host       string
		validating bool
		want       *Error // nil: not for a user to act on
	}{
		{name: "rate limited, with Retry-After", err: limited,
			want: &Error{Reason: ReasonRateLimited, Detail: limited.Detail, RetryAfter: time.Hour}},
		{name: "rate limited, pre-RFC namespace and case", err: &xacme.Error{ProblemType: "urn:acme:error:ratelimited", StatusCode: 429},
			want: &Error{Reason: ReasonRateLimited, Detail: "urn:acme:error:ratelimited"}},
		{name: "dns problem while validating", err: problem("dns", "DNS problem: NXDOMAIN looking up A for hello.example.com"), host: "hello.example.com", validating: true,
			want: &Error{Reason: ReasonDNSError, Host: "hello.example.com", Detail: "DNS problem: NXDOMAIN looking up A for hello.example.com"}},
		{name: "rejected identifier names the host in a subproblem", err: rejected,
			want: &Error{Reason: ReasonRejected, Host: "bank.example", Detail: "Cannot issue for 2 identifiers"}},
		{name: "caa refuses even while validating", err: problem("caa", "CAA record for example.com prevents issuance"), host: "example.com", validating: true,
			want: &Error{Reason: ReasonRejected, Host: "example.com", Detail: "CAA record for example.com prevents issuance"}},
		{name: "unsupported identifier", err: problem("unsupportedIdentifier", "ip identifiers need the shortlived profile"),
			want: &Error{Reason: ReasonRejected, Detail: "ip identifiers need the shortlived profile"}},
		{name: "unauthorized while validating is a failed challenge", err: problem("unauthorized", "Invalid response from http://a.example/.well-known/acme-challenge/x: 404"), host: "a.example", validating: true,
			want: &Error{Reason: ReasonChallengeFailed, Host: "a.example", Detail: "Invalid response from http://a.example/.well-known/acme-challenge/x: 404"}},
		{name: "unauthorized outside validation is a refusal", err: problem("unauthorized", "account deactivated"),
			want: &Error{Reason: ReasonRejected, Detail: "account deactivated"}},
		{name: "server internal", err: problem("serverInternal", "the database is down"),
			want: &Error{Reason: ReasonCAUnreachable, Detail: "the database is down"}},
		{name: "5xx with no problem document, Retry-After kept", err: unavailable,
			want: &Error{Reason: ReasonCAUnreachable, Detail: "<html>maintenance</html>", RetryAfter: 2 * time.Minute}},
		{name: "a 404 that is no problem document", err: &xacme.Error{StatusCode: 404},
			want: &Error{Reason: ReasonCAUnreachable, Detail: "HTTP 404 Not Found"}},
		{name: "invalid authorization, connection problem", validating: true, err: &xacme.AuthorizationError{
			Identifier: "a.example",
			Errors:     []error{problem("connection", "Fetching http://a.example/.well-known/acme-challenge/x: Connection refused")}},
			want: &Error{Reason: ReasonChallengeFailed, Host: "a.example", Detail: "Fetching http://a.example/.well-known/acme-challenge/x: Connection refused"}},
		{name: "invalid authorization, dns problem", err: &xacme.AuthorizationError{
			Identifier: "new.example", Errors: []error{problem("dns", "NXDOMAIN")}},
			want: &Error{Reason: ReasonDNSError, Host: "new.example", Detail: "NXDOMAIN"}},
		{name: "invalid authorization, no reason given", err: &xacme.AuthorizationError{Identifier: "a.example"},
			want: &Error{Reason: ReasonChallengeFailed, Host: "a.example", Detail: "the CA marked the authorization invalid and gave no reason"}},
		{name: "invalid order, no problem", host: "a.example", err: &xacme.OrderError{Status: "invalid"},
			want: &Error{Reason: ReasonRejected, Host: "a.example", Detail: "the CA marked the order invalid and gave no reason"}},
		{name: "invalid order, bad CSR", err: &xacme.OrderError{Status: "invalid", Problem: problem("badCSR", "key too weak")},
			want: &Error{Reason: ReasonRejected, Detail: "key too weak"}},
		{name: "transport error", err: fmt.Errorf("wrapped: %w", &url.Error{Op: "Get", URL: "https://ca.example/dir", Err: errors.New("dial tcp: connection refused")}),
			want: &Error{Reason: ReasonCAUnreachable, Detail: `Get "https://ca.example/dir": dial tcp: connection refused`}},
		{name: "already an Error", err: fmt.Errorf("x: %w", mine), want: mine},
		{name: "deadline", err: fmt.Errorf("waiting: %w", context.DeadlineExceeded)},
		{name: "cancelled", err: context.Canceled},
		{name: "an unreadable response", err: errors.New("acme: invalid response: unexpected EOF")},
		{name: "nil"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := classify(tc.err, tc.host, tc.validating)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("classify = %#v, want nil", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("classify = nil, want %+v", tc.want)
			}
			if got.Reason != tc.want.Reason || got.Host != tc.want.Host || got.Detail != tc.want.Detail || got.RetryAfter != tc.want.RetryAfter {
				t.Errorf("classify =\n  {%s %q %q %s}\nwant\n  {%s %q %q %s}",
					got.Reason, got.Host, got.Detail, got.RetryAfter, tc.want.Reason, tc.want.Host, tc.want.Detail, tc.want.RetryAfter)
			}
			if got != mine && !errors.Is(got, tc.err) && !errors.Is(tc.err, got) {
				t.Errorf("the Error does not wrap its cause %v", tc.err)
			}
		})
	}
}

func TestErrorReadsAsAConditionMessage(t *testing.T) {
	cases := []struct {
		err  Error
		want string
	}{
		{Error{Reason: ReasonRateLimited, Detail: "too many new orders", RetryAfter: 90*time.Minute + 400*time.Millisecond},
			"the ACME server is rate limiting requests: too many new orders (retry after 1h30m0s)"},
		{Error{Reason: ReasonRateLimited, Host: "a.example", Detail: "too many certificates"},
			"the ACME server is rate limiting requests for a.example: too many certificates"},
		{Error{Reason: ReasonChallengeFailed, Host: "a.example", Detail: "connection refused"},
			"HTTP-01 challenge for a.example failed: connection refused"},
		{Error{Reason: ReasonChallengeFailed, Detail: "timeout"},
			"HTTP-01 challenge for a name in the order failed: timeout"},
		{Error{Reason: ReasonDNSError, Host: "new.example", Detail: "NXDOMAIN looking up A for new.example"},
			"the ACME server could not resolve new.example: NXDOMAIN looking up A for new.example"},
		{Error{Reason: ReasonCAUnreachable, Detail: `Get "https://ca.example/dir": connection refused`},
			`cannot reach the ACME server: Get "https://ca.example/dir": connection refused`},
		{Error{Reason: ReasonRejected, Host: "bank.example", Detail: "forbidden by policy"},
			"certificate for bank.example refused: forbidden by policy"},
		{Error{Reason: ReasonRejected, Detail: "malformed order"},
			"certificate refused: malformed order"},
		{Error{Reason: "Other"}, "Other"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.err.Reason, got, tc.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{" 5 ", 5 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"99999999999", 0}, // beyond a year: nonsense, ignored
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tc := range cases {
		h := http.Header{}
		if tc.value != "" {
			h.Set("Retry-After", tc.value)
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %s, want %s", tc.value, got, tc.want)
		}
	}
	if got := retryAfter(nil, now); got != 0 {
		t.Errorf("retryAfter(nil) = %s", got)
	}
}

func TestOneLine(t *testing.T) {
	long := strings.Repeat("é", maxDetail) // two bytes each
	cases := []struct{ in, want string }{
		{"  plain  ", "plain"},
		{"line one\nline two\r\n\tindented\n", "line one line two indented"},
		{"a  b", "a  b"}, // a body the CA quotes keeps its spaces
		{long, long[:maxDetail] + "…"},
		{strings.Repeat("a", maxDetail-1) + "é", strings.Repeat("a", maxDetail-1) + "…"},
	}
	for _, tc := range cases {
		if got := oneLine(tc.in); got != tc.want {
			t.Errorf("oneLine(%.40q…) = %.60q…, want %.60q…", tc.in, got, tc.want)
		}
	}
}
