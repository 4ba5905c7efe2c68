package forgeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/knitops/knit/gitsync/forge"
)

// userAgent names knit to the forge; GitHub rejects requests without one.
const userAgent = "knit (+https://github.com/knitops/knit)"

// Body size limits: error bodies are read for their message only, and
// the largest success bodies knit reads are pages of 100 comments.
const (
	maxErrorBody   = 64 << 10
	maxSuccessBody = 16 << 20
)

// transport sends one forge's API calls: authentication, JSON, retries.
type transport struct {
	provider forge.Forge
	base     *url.URL
	auth     func(http.Header)
	extra    http.Header
	client   *http.Client
	log      *slog.Logger
	retry    Retry
	clock    clock
}

// newTransport builds the transport of a validated o.
func newTransport(o *Options) *transport {
	base, _ := url.Parse(o.APIURL) // Validate checked it
	t := &transport{
		provider: o.Provider,
		base:     base,
		client:   sameHostRedirects(o.HTTPClient),
		log:      o.Log,
		retry:    o.Retry,
		clock:    o.clock,
		extra:    http.Header{},
	}
	token := o.Token
	switch o.Provider {
	case forge.ForgeGitHub:
		t.auth = func(h http.Header) { h.Set("Authorization", "Bearer "+token) }
		t.extra.Set("Accept", "application/vnd.github+json")
		t.extra.Set("X-GitHub-Api-Version", "2022-11-28")
	case forge.ForgeGitea:
		t.auth = func(h http.Header) { h.Set("Authorization", "token "+token) }
		t.extra.Set("Accept", "application/json")
	case forge.ForgeGitLab:
		t.auth = func(h http.Header) { h.Set("PRIVATE-TOKEN", token) }
		t.extra.Set("Accept", "application/json")
	}
	return t
}

// sameHostRedirects copies c with a redirect policy that refuses to
// leave the host (or downgrade the scheme): Go drops Authorization on
// such redirects but would forward GitLab's PRIVATE-TOKEN.
func sameHostRedirects(c *http.Client) *http.Client {
	cp := *c
	prev := c.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if req.URL.Host != first.Host || req.URL.Scheme != first.Scheme {
			return errCrossHostRedirect
		}
		if prev != nil {
			return prev(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cp
}

// call is one API request.
type call struct {
	method string
	// path is below the API base (/repos/o/r/…), or an absolute URL on
	// the API's host (a Link header's next page).
	path  string
	query url.Values
	// in, when not nil, is sent as the JSON body.
	in any
	// out, when not nil, receives a 2xx answer's JSON body.
	out any
}

// do sends c, retrying transient failures within t.retry, and returns the
// answer's headers.
func (t *transport) do(ctx context.Context, c call) (http.Header, error) {
	u, err := t.url(c.path, c.query)
	if err != nil {
		return nil, err
	}
	var payload []byte
	if c.in != nil {
		if payload, err = json.Marshal(c.in); err != nil {
			return nil, fmt.Errorf("%s API %s %s: encode body: %w", t.provider, c.method, u.EscapedPath(), err)
		}
	}
	start := t.clock.Now()
	for attempt := 1; ; attempt++ {
		h, retryable, wait, err := t.once(ctx, c, u, payload)
		if err == nil || !retryable {
			return h, err
		}
		if ctx.Err() != nil {
			return nil, err
		}
		if attempt >= t.retry.MaxAttempts {
			return nil, fmt.Errorf("giving up after %d attempts: %w", attempt, err)
		}
		if wait <= 0 {
			wait = t.retry.backoff(attempt)
		}
		now := t.clock.Now()
		if now.Add(wait).Sub(start) > t.retry.MaxElapsed {
			var rl *RateLimitError
			if errors.As(err, &rl) {
				rl.Reset = now.Add(wait)
				return nil, rl
			}
			return nil, fmt.Errorf("giving up after %d attempts, the next in %s would pass the %s budget: %w", attempt, wait.Round(time.Millisecond), t.retry.MaxElapsed, err)
		}
		t.log.Info("forge API call failed; retrying", "provider", t.provider, "method", c.method, "path", u.EscapedPath(),
			"attempt", attempt, "wait", wait, "error", err)
		if err := t.clock.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s API %s %s: waiting to retry: %w", t.provider, c.method, u.EscapedPath(), err)
		}
	}
}

// url resolves a call's path against the API base. An absolute URL must
// stay on the API's scheme and host, or the token would follow it.
func (t *transport) url(path string, query url.Values) (*url.URL, error) {
	var u *url.URL
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		var err error
		if u, err = url.Parse(path); err != nil {
			return nil, fmt.Errorf("%s API: next page link: %w", t.provider, errors.Unwrap(err))
		}
		if u.Scheme != t.base.Scheme || u.Host != t.base.Host {
			return nil, fmt.Errorf("%s API: next page link to %s://%s is not on the API's host %s", t.provider, u.Scheme, u.Host, t.base.Host)
		}
	} else {
		var err error
		if u, err = url.Parse(t.base.String() + path); err != nil {
			return nil, fmt.Errorf("%s API: request path %q: %w", t.provider, path, errors.Unwrap(err))
		}
	}
	if len(query) > 0 {
		q := u.Query()
		for k, vs := range query {
			q[k] = vs
		}
		u.RawQuery = q.Encode()
	}
	return u, nil
}

// once sends c one time. It returns the answer's headers on success,
// else the error, whether it may be retried, and how long the forge
// asked to wait first (0: it did not say).
func (t *transport) once(ctx context.Context, c call, u *url.URL, payload []byte) (h http.Header, retryable bool, wait time.Duration, err error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, u.String(), body)
	if err != nil {
		return nil, false, 0, fmt.Errorf("%s API %s %s: %w", t.provider, c.method, u.EscapedPath(), err)
	}
	for k, vs := range t.extra {
		req.Header[k] = vs
	}
	req.Header.Set("User-Agent", userAgent)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	t.auth(req.Header)

	resp, err := t.client.Do(req)
	if err != nil {
		// *url.Error names the URL, which holds no credentials.
		return nil, !errors.Is(err, errCrossHostRedirect), 0, fmt.Errorf("%s API %s %s: %w", t.provider, c.method, u.EscapedPath(), err)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
	}()

	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if c.out != nil && resp.StatusCode != http.StatusNoContent {
			if err := json.NewDecoder(io.LimitReader(resp.Body, maxSuccessBody)).Decode(c.out); err != nil {
				return nil, false, 0, fmt.Errorf("%s API %s %s: decode answer: %w", t.provider, c.method, u.EscapedPath(), err)
			}
		}
		return resp.Header, false, 0, nil
	}

	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	apiErr := &APIError{Provider: t.provider, Method: c.method, Path: u.EscapedPath(), Status: resp.StatusCode, Message: forgeMessage(b)}
	now := t.clock.Now()
	if limited, wait := rateLimited(resp.StatusCode, resp.Header, apiErr.Message, now); limited {
		return nil, true, wait, &RateLimitError{Reset: now.Add(wait), Err: apiErr}
	}
	if resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented {
		wait, _ := retryAfter(resp.Header, now)
		return nil, true, wait, apiErr
	}
	return nil, false, 0, apiErr
}
