package forge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// Defaults for Options left zero.
const (
	// DefaultMaxBodyBytes bounds a webhook body; GitHub caps its payloads
	// at 25 MB but pushes and pull requests are a few KiB, so 1 MiB is
	// generous and keeps a flood cheap.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultDedupeSize is how many recent delivery ids are remembered.
	DefaultDedupeSize = 4096
	// DefaultPathPrefix is where the per-forge routes hang.
	DefaultPathPrefix = "/hooks/"
)

// ErrRepoNotFound is what Options.Secret returns (possibly wrapped) for a
// repository knit does not track; the Receiver answers 404.
var ErrRepoNotFound = errors.New("repository not found")

// ErrStale is what OnEvent returns (wrapped) for an event older than what
// knit already recorded of its pull request: a replay of a captured
// delivery, or a forge's redelivery overtaken by a later event. The
// Receiver answers 409 and remembers the delivery as settled.
var ErrStale = errors.New("event is older than the one already recorded")

// Options configure a Receiver. Secret and OnEvent are required.
type Options struct {
	// Secret returns the webhook secret of repo (the <repo> of the URL):
	// the HMAC key for GitHub, Gitea and generic webhooks, the token for
	// GitLab. An error wrapping ErrRepoNotFound answers 404; any other
	// error 500; an empty secret 403, since an empty HMAC key proves nothing.
	Secret func(ctx context.Context, repo string) ([]byte, error)
	// OnEvent receives every verified, parsed, non-duplicate event. It runs
	// on the request's goroutine, so the forge waits for it: keep it short
	// (record the event, wake a reconciler). An error answers 500 and lets
	// the forge's redelivery try again.
	OnEvent func(ctx context.Context, e Event) error

	// RepoURL, when set, returns the clone URL of the GitRepository repo
	// names; a verified event whose payload is for another repository
	// (MatchRepository) is refused with 403 and not delivered. An error
	// wrapping ErrRepoNotFound answers 404, another error 500.
	RepoURL func(ctx context.Context, repo string) (string, error)
	// Now is the clock signed timestamps are checked against; time.Now
	// when nil.
	Now func() time.Time

	// MaxBodyBytes bounds a request body; larger ones answer 413.
	// Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// DedupeSize is how many recent deliveries (by a hash of their signed
	// body) are remembered to ignore redeliveries and replays of already
	// handled events. The window is in memory: after a restart a replayed
	// pull-request event is refused by its timestamp instead (ErrStale),
	// and a replayed push only asks for a fetch of what the branch already
	// is. Zero means DefaultDedupeSize.
	DedupeSize int
	// PathPrefix is where the routes start, ending in a slash. Empty
	// means DefaultPathPrefix.
	PathPrefix string
	// Logger receives one line per delivery and rejection; secrets are
	// never logged. Nil discards.
	Logger *slog.Logger
}

// Validate checks o and fills in defaults for zero fields.
func (o *Options) Validate() error {
	var errs []error
	if o.Secret == nil {
		errs = append(errs, errors.New("Secret is required"))
	}
	if o.OnEvent == nil {
		errs = append(errs, errors.New("OnEvent is required"))
	}
	switch {
	case o.MaxBodyBytes < 0:
		errs = append(errs, fmt.Errorf("MaxBodyBytes %d is negative", o.MaxBodyBytes))
	case o.MaxBodyBytes == 0:
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	switch {
	case o.DedupeSize < 0:
		errs = append(errs, fmt.Errorf("DedupeSize %d is negative", o.DedupeSize))
	case o.DedupeSize == 0:
		o.DedupeSize = DefaultDedupeSize
	}
	if o.PathPrefix == "" {
		o.PathPrefix = DefaultPathPrefix
	}
	if !strings.HasPrefix(o.PathPrefix, "/") || !strings.HasSuffix(o.PathPrefix, "/") {
		errs = append(errs, fmt.Errorf("PathPrefix %q must start and end with /", o.PathPrefix))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid forge receiver options: %w", err)
	}
	return nil
}
