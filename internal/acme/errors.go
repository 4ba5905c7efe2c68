package acme

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	xacme "golang.org/x/crypto/acme"
)

// The reasons an Error carries. They are condition reasons in Knative's
// style (CamelCase, stable), so a controller can set one as a status
// condition's Reason unchanged and users and tools can match on it.
const (
	// ReasonRateLimited: the CA refuses more requests from this account or
	// for these names for now (ACME problem rateLimited). Error.RetryAfter
	// says when to try again, when the CA said.
	ReasonRateLimited = "RateLimited"

	// ReasonChallengeFailed: the CA asked
	// http://<host>/.well-known/acme-challenge/<token> and did not get the
	// key authorization: the name does not point at the ingress, port 80
	// is closed or filtered, or something else answered. Error.Detail has
	// the CA's account of what it saw.
	ReasonChallengeFailed = "ChallengeFailed"

	// ReasonDNSError: the CA could not resolve the host (ACME problem dns):
	// the name does not exist yet, or its DNS servers fail.
	ReasonDNSError = "DNSError"

	// ReasonCAUnreachable: no usable answer from the ACME server: the
	// directory URL does not connect, its TLS certificate does not verify,
	// the server fails (5xx, serverInternal), or what answered is not an
	// ACME server. Usually knit's configuration or the CA's outage, not
	// the host's owner's to fix.
	ReasonCAUnreachable = "CAUnreachable"

	// ReasonRejected: the CA refuses the request itself: a name it will not
	// issue for (rejectedIdentifier, unsupportedIdentifier, a CAA record
	// naming another CA), a malformed order, an unacceptable contact
	// address. Also a wildcard name, which HTTP-01 cannot validate.
	ReasonRejected = "Rejected"
)

// maxDetail bounds Error.Detail. A CA may quote the body the challenge
// URL answered, which can be a whole HTML page; a status condition wants
// the gist.
const maxDetail = 512

// Error is a failure to obtain a certificate that a user can act on,
// written for a status condition: Reason for its reason, Error() for its
// message. Issuer.Obtain returns it unwrapped; errors.As finds it.
//
// It never carries a private key: Detail is the CA's problem detail or a
// transport error, and the cause it wraps is x/crypto/acme's error or
// the HTTP client's.
type Error struct {
	// Reason is one of the Reason constants.
	Reason string
	// Host is the name the failure concerns, when it concerns one.
	Host string
	// Detail is the CA's own explanation (the ACME problem's detail) or
	// the transport error, on one line.
	Detail string
	// RetryAfter is how long the CA asked to wait before trying again
	// (its Retry-After header); zero when it did not say.
	RetryAfter time.Duration

	cause error
}

// Error reads as a status condition's message: what failed, for which
// host, and the CA's words.
func (e *Error) Error() string {
	var b strings.Builder
	switch e.Reason {
	case ReasonRateLimited:
		b.WriteString("the ACME server is rate limiting requests")
		if e.Host != "" {
			b.WriteString(" for " + e.Host)
		}
	case ReasonChallengeFailed:
		b.WriteString("HTTP-01 challenge for " + orUnnamed(e.Host) + " failed")
	case ReasonDNSError:
		b.WriteString("the ACME server could not resolve " + orUnnamed(e.Host))
	case ReasonCAUnreachable:
		b.WriteString("cannot reach the ACME server")
	case ReasonRejected:
		b.WriteString("certificate")
		if e.Host != "" {
			b.WriteString(" for " + e.Host)
		}
		b.WriteString(" refused")
	default:
		b.WriteString(e.Reason)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.RetryAfter > 0 {
		b.WriteString(" (retry after " + e.RetryAfter.Round(time.Second).String() + ")")
	}
	return b.String()
}

// Unwrap is the error the Error was made from: x/crypto/acme's *Error,
// *AuthorizationError or *OrderError, or the HTTP client's *url.Error.
func (e *Error) Unwrap() error { return e.cause }

func orUnnamed(host string) string {
	if host == "" {
		return "a name in the order"
	}
	return host
}

// classify turns what x/crypto/acme returned into an *Error when a user
// can act on it, and returns nil when not: the context ending, or a
// response x/crypto/acme could not read. host is the name the request
// concerned ("" for the account or the whole order); validating says the
// error came from a challenge, where an unexpected problem type means the
// validation failed rather than the CA refusing the order.
func classify(err error, host string, validating bool) *Error {
	var (
		e     *Error
		authz *xacme.AuthorizationError
		order *xacme.OrderError
		prob  *xacme.Error
		urlE  *url.Error
	)
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil
	case errors.As(err, &e):
		return e
	case errors.As(err, &authz):
		return fromAuthorization(authz, err)
	case errors.As(err, &order):
		return fromOrder(order, host, err)
	case errors.As(err, &prob):
		return fromProblem(prob, host, validating, err)
	case errors.As(err, &urlE):
		return &Error{Reason: ReasonCAUnreachable, Detail: oneLine(urlE.Error()), cause: err}
	}
	return nil
}

// fromAuthorization is an authorization that went invalid: its
// challenge's problem says why.
func fromAuthorization(authz *xacme.AuthorizationError, cause error) *Error {
	for _, ce := range authz.Errors {
		var prob *xacme.Error
		if errors.As(ce, &prob) {
			return fromProblem(prob, authz.Identifier, true, cause)
		}
	}
	return &Error{
		Reason: ReasonChallengeFailed, Host: authz.Identifier,
		Detail: "the CA marked the authorization invalid and gave no reason", cause: cause,
	}
}

// fromOrder is an order that went invalid. Obtain waits for every
// authorization before the order, so an order failing is the CA refusing
// it (at finalization, say), not a challenge.
func fromOrder(order *xacme.OrderError, host string, cause error) *Error {
	if order.Problem != nil {
		return fromProblem(order.Problem, host, false, cause)
	}
	return &Error{
		Reason: ReasonRejected, Host: host,
		Detail: "the CA marked the order " + order.Status + " and gave no reason", cause: cause,
	}
}

// fromProblem classifies an ACME problem document (RFC 8555 §6.7) by its
// type.
func fromProblem(p *xacme.Error, host string, validating bool, cause error) *Error {
	e := &Error{Reason: problemReason(p, validating), Host: host, cause: cause}
	for _, sp := range p.Subproblems {
		if sp.Identifier != nil && sp.Identifier.Value != "" {
			e.Host = sp.Identifier.Value
			break
		}
	}
	e.Detail = oneLine(p.Detail)
	if e.Detail == "" {
		e.Detail = p.ProblemType
	}
	if e.Detail == "" && p.StatusCode != 0 {
		e.Detail = "HTTP " + strconv.Itoa(p.StatusCode) + " " + http.StatusText(p.StatusCode)
	}
	e.RetryAfter = retryAfter(p.Header, time.Now())
	return e
}

func problemReason(p *xacme.Error, validating bool) string {
	// Types are URNs (urn:ietf:params:acme:error:rateLimited); some CAs
	// vary the prefix or the case, so the last segment, folded, decides.
	name := strings.ToLower(p.ProblemType[strings.LastIndex(p.ProblemType, ":")+1:])
	switch name {
	case "ratelimited":
		return ReasonRateLimited
	case "dns":
		return ReasonDNSError
	case "rejectedidentifier", "unsupportedidentifier", "caa":
		return ReasonRejected
	case "serverinternal", "":
		// No type at all: what answered sent no problem document, so it
		// is not (working as) an ACME server.
		return ReasonCAUnreachable
	}
	switch {
	case p.StatusCode >= 500:
		return ReasonCAUnreachable
	case validating:
		return ReasonChallengeFailed
	}
	return ReasonRejected
}

// retryAfter reads a Retry-After header (RFC 9110 §10.2.3): seconds, or
// an HTTP date. Zero when absent, unreadable or past.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 || s > int64(365*24*time.Hour/time.Second) {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// oneLine makes text fit a status condition message: each run of line
// breaks and tabs one space, and at most maxDetail bytes.
func oneLine(s string) string {
	var b strings.Builder
	broken := false
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' {
			broken = true
			continue
		}
		if broken {
			b.WriteByte(' ')
			broken = false
		}
		b.WriteRune(r)
	}
	s = strings.TrimSpace(b.String())
	if len(s) <= maxDetail {
		return s
	}
	cut := maxDetail
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
