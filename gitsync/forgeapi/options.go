package forgeapi

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/knitops/knit/gitsync/egress"
	"github.com/knitops/knit/gitsync/forge"
)

// Defaults for Options left zero.
const (
	// DefaultTimeout bounds one HTTP exchange of the default HTTPClient.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxAttempts counts the first try: four retries.
	DefaultMaxAttempts = 5
	// DefaultMaxElapsed bounds one call, waits included: a minute is long
	// enough to ride out a blip or a short rate limit, short enough that
	// a reconcile is not held up when the forge is down.
	DefaultMaxElapsed = time.Minute
	// DefaultMinBackoff is the wait before the first retry, before jitter.
	DefaultMinBackoff = 500 * time.Millisecond
	// DefaultMaxBackoff caps the doubling waits between retries.
	DefaultMaxBackoff = 15 * time.Second
)

// Options configure a Client for one repository.
type Options struct {
	// Provider is github, gitlab or gitea (Forgejo too): the
	// GitRepository's spec.provider. Generic webhooks have no API.
	Provider forge.Forge
	// RepoURL is the repository's clone URL (https, http, ssh:// or
	// scp-like git@host:owner/name.git); the API base and the repository's
	// path on the forge are derived from it. Credentials in it are dropped.
	RepoURL string
	// APIURL overrides the derived API base, e.g. https://ghe.example.com/api/v3
	// or, for a GitLab under a relative URL root, https://example.com/gitlab/api/v4
	// (the root is then also cut from RepoURL's path). Validate fills it
	// in when empty.
	APIURL string
	// Token authenticates every call: a personal, project or app token
	// that may write commit statuses and comments (and merge, for automerge).
	Token string
	// HTTPClient sends the requests; nil means one with DefaultTimeout.
	// The Client uses a copy that refuses redirects to another host, so
	// the token never leaves the forge.
	HTTPClient *http.Client
	// Egress, when set, is the policy every call obeys: the API URL is
	// checked when the Client is made, and each connection when it is
	// dialled, on the address the name resolved to, so a repository URL
	// pointing at loopback, link-local addresses or the control plane gets
	// nowhere unless the operator allows it. With a caller's HTTPClient
	// the policy applies when its Transport is an *http.Transport (or nil).
	Egress func() *egress.Policy
	// Log receives one line per retried call; nil discards.
	Log *slog.Logger
	// Retry bounds how transient failures are retried.
	Retry Retry

	// clock is time for the retry loop; nil means the real one. Tests
	// replace it so backoffs and Retry-After cost no real time.
	clock clock
	// repo is the repository's path in API URLs, filled by Validate:
	// owner/name with each part escaped, or GitLab's escaped project path.
	repo string
}

// Retry bounds the retries of one call. Zero fields take the defaults.
type Retry struct {
	// MaxAttempts is how many times a call is tried in all; 1 never retries.
	MaxAttempts int
	// MaxElapsed bounds a call's total time, waits included; a wait that
	// would end after it is not started (for a rate limit: RateLimitError).
	MaxElapsed time.Duration
	// MinBackoff is the wait before the first retry; it doubles per retry
	// up to MaxBackoff, and each wait is jittered down by up to half.
	MinBackoff time.Duration
	// MaxBackoff caps one wait between retries (not a forge's Retry-After).
	MaxBackoff time.Duration
}

// Validate checks o, fills defaults for zero fields and derives APIURL
// and the repository's path from RepoURL.
func (o *Options) Validate() error {
	var errs []error
	switch o.Provider {
	case forge.ForgeGitHub, forge.ForgeGitLab, forge.ForgeGitea:
		ep, err := deriveEndpoint(o.Provider, o.RepoURL, o.APIURL)
		if err != nil {
			errs = append(errs, err)
			break
		}
		o.APIURL, o.repo = ep.base, ep.repo
	case "":
		errs = append(errs, errors.New("Provider is required (github, gitlab or gitea)"))
	default:
		errs = append(errs, fmt.Errorf("Provider %q has no API knit can call (github, gitlab or gitea)", o.Provider))
	}
	if o.Token == "" {
		errs = append(errs, errors.New("Token is required: forges do not accept anonymous statuses or comments"))
	}
	errs = append(errs, o.Retry.defaults()...)
	o.HTTPClient = guarded(o.HTTPClient, o.Egress)
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.clock == nil {
		o.clock = realClock{}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid forge API options for %s: %w", redactURL(o.RepoURL), err)
	}
	return nil
}

// defaults fills r's zero fields and reports negative ones.
func (r *Retry) defaults() []error {
	var errs []error
	fill := func(name string, v *time.Duration, def time.Duration) {
		switch {
		case *v < 0:
			errs = append(errs, fmt.Errorf("Retry.%s %s is negative", name, *v))
		case *v == 0:
			*v = def
		}
	}
	switch {
	case r.MaxAttempts < 0:
		errs = append(errs, fmt.Errorf("Retry.MaxAttempts %d is negative", r.MaxAttempts))
	case r.MaxAttempts == 0:
		r.MaxAttempts = DefaultMaxAttempts
	}
	fill("MaxElapsed", &r.MaxElapsed, DefaultMaxElapsed)
	fill("MinBackoff", &r.MinBackoff, DefaultMinBackoff)
	fill("MaxBackoff", &r.MaxBackoff, DefaultMaxBackoff)
	if r.MaxBackoff < r.MinBackoff {
		errs = append(errs, fmt.Errorf("Retry.MaxBackoff %s is below MinBackoff %s", r.MaxBackoff, r.MinBackoff))
	}
	return errs
}

// String shows o without its token, so that printing Options is safe.
func (o Options) String() string {
	tok := ""
	if o.Token != "" {
		tok = "[redacted]"
	}
	return fmt.Sprintf("{Provider:%s RepoURL:%s APIURL:%s Token:%s}", o.Provider, redactURL(o.RepoURL), redactURL(o.APIURL), tok)
}

// LogValue logs o without its token.
func (o Options) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("provider", string(o.Provider)),
		slog.String("repoURL", redactURL(o.RepoURL)),
		slog.String("apiURL", redactURL(o.APIURL)),
	)
}

// guarded is c (a client with DefaultTimeout when nil) whose connections
// obey policy, when there is one.
func guarded(c *http.Client, policy func() *egress.Policy) *http.Client {
	if c == nil {
		c = &http.Client{Timeout: DefaultTimeout}
	}
	if policy == nil {
		return c
	}
	cp := *c
	switch t := c.Transport.(type) {
	case nil:
		cp.Transport = egress.Transport(policy)
	case *http.Transport:
		t = t.Clone()
		t.DialContext = egress.DialContext(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}, policy)
		t.Proxy = nil // a proxy's address is all a dial would see
		cp.Transport = t
	}
	return &cp
}
