package events

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/knitops/knit/gitsync/egress"
)

// Defaults for Options left zero.
const (
	// DefaultQueueSize holds a few minutes of events for a busy cluster
	// while a sink is down.
	DefaultQueueSize = 1000
	// DefaultQueueBytes bounds a sink's queued events, in their JSON form,
	// well inside the 1 MiB a ConfigMap (a Store's usual home) may hold,
	// with room for the ids of the last DefaultQueueSize events taken.
	DefaultQueueBytes = 512 << 10
	// DefaultBackoffBase is the wait before the first retry.
	DefaultBackoffBase = 100 * time.Millisecond
	// DefaultBackoffMax caps the wait between retries, so a sink that comes
	// back is served within half a minute.
	DefaultBackoffMax = 30 * time.Second
	// DefaultAttemptTimeout bounds one delivery attempt.
	DefaultAttemptTimeout = 10 * time.Second
)

// Options configure a Dispatcher. The zero value is usable.
type Options struct {
	// QueueSize is how many undelivered events each sink holds; beyond it
	// the oldest is dropped. Zero means DefaultQueueSize.
	QueueSize int
	// QueueBytes bounds the JSON size of each sink's undelivered events;
	// beyond it the oldest is dropped. Zero means DefaultQueueBytes.
	QueueBytes int
	// Store keeps each sink's undelivered events and counts across
	// restarts; nil keeps them in memory only, lost when the process ends.
	Store Store
	// BackoffBase is the first retry's wait; each retry doubles it, with
	// jitter, up to BackoffMax. Zero means DefaultBackoffBase.
	BackoffBase time.Duration
	// BackoffMax caps the wait between retries. Zero means DefaultBackoffMax.
	BackoffMax time.Duration
	// AttemptTimeout bounds one HTTP delivery. Zero means DefaultAttemptTimeout.
	AttemptTimeout time.Duration
	// HTTPClient sends the requests; nil means a client of its own whose
	// connections obey Egress. Its Timeout, if any, applies on top of
	// AttemptTimeout.
	HTTPClient *http.Client
	// Egress is where sinks may be, asked anew for every connection (the
	// operator may change it); nil allows everything. A delivery the
	// policy refuses is dropped at once, not retried.
	Egress func() *egress.Policy
	// Registerer receives the dispatcher's metrics; nil keeps them
	// unregistered (Stats still counts). Metrics already registered by
	// another Dispatcher on the same registry are shared.
	Registerer prometheus.Registerer
	// Logger receives delivery failures and drops. Nil discards.
	Logger *slog.Logger
}

// Validate checks o and fills in defaults for zero fields.
func (o *Options) Validate() error {
	var errs []error
	positive := func(name string, v int64) bool {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s %d is negative", name, v))
		}
		return v == 0
	}
	if positive("QueueSize", int64(o.QueueSize)) {
		o.QueueSize = DefaultQueueSize
	}
	if positive("QueueBytes", int64(o.QueueBytes)) {
		o.QueueBytes = DefaultQueueBytes
	}
	if positive("BackoffBase", int64(o.BackoffBase)) {
		o.BackoffBase = DefaultBackoffBase
	}
	if positive("BackoffMax", int64(o.BackoffMax)) {
		o.BackoffMax = DefaultBackoffMax
	}
	if positive("AttemptTimeout", int64(o.AttemptTimeout)) {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.BackoffMax < o.BackoffBase {
		errs = append(errs, fmt.Errorf("BackoffMax %v is below BackoffBase %v", o.BackoffMax, o.BackoffBase))
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: egress.Transport(o.Egress)}
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid event dispatcher options: %w", err)
	}
	return nil
}
