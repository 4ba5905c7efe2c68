package activator

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/knitops/knit/internal/hopauth"
)

// Defaults of Options.
const (
	// DefaultMaxWaiting is how many requests may wait per Revision.
	DefaultMaxWaiting = 1000
	// DefaultMaxWait caps how long a request waits for a replica. A cold
	// start beyond a minute is a failure the client should hear about.
	DefaultMaxWait = 60 * time.Second
	// DefaultStatsInterval is how often load goes to the Reporter and
	// pokes repeat for requests still waiting.
	DefaultStatsInterval = time.Second
	// DefaultProbeTimeout bounds one readiness probe of a replica.
	DefaultProbeTimeout = time.Second
)

// ErrInvalidOptions wraps every error Options.Validate returns.
var ErrInvalidOptions = errors.New("invalid activator options")

// Options configure an Activator. The zero value works: defaults are
// filled by Validate.
type Options struct {
	// Reporter hears pokes and load; nil drops them (benchmarks, tests).
	Reporter Reporter
	// Registry the Prometheus metrics are registered on; nil registers
	// them nowhere. Never the global registry unless passed explicitly.
	Registry prometheus.Registerer
	// MaxWaiting is how many requests may wait per Revision before more
	// are refused with 503; 0 means DefaultMaxWaiting.
	MaxWaiting int
	// MaxWait caps how long a request waits for a replica; a Revision's
	// shorter timeoutSeconds wins. 0 means DefaultMaxWait.
	MaxWait time.Duration
	// StatsInterval is how often load is reported; 0 means
	// DefaultStatsInterval.
	StatsInterval time.Duration
	// ProbeTimeout bounds one probe; 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// Logger for lifecycle and errors; nil discards.
	Logger *slog.Logger
	// Self is this activator's address among the endpoints of the
	// activator Service (knit-system/knit-activator): its pod IP, which
	// knit activator reads from $POD_IP. Every activator serves every
	// Revision in Proxy mode, so each sends to its own share of a
	// Revision's replicas, containerConcurrency × its share at once:
	// when there are at least as many replicas as activators, replica i
	// of the sorted list is activator i mod n's; with fewer, every
	// activator uses them all for 1/n of their capacity (at least 1).
	// An activator's place is Self's among the ready activator addresses
	// sorted. Empty, or not among them, the activator takes every
	// replica as if it were alone (knit dev, tests). Read by
	// SetupWithManager.
	Self string
	// RouteKeys verify the ingress's signature (hopauth.RouteHeader) of
	// the Revision the Knative-Serving-* headers name: with keys, a
	// request without a valid one is refused with 403, so a pod calling
	// the activator directly cannot reach a Revision its Routes do not
	// offer (a cluster-local one, a retired one, another namespace's).
	// nil trusts the headers as they come: only for tests and benchmarks,
	// where nothing else reaches the activator; knit activator and knit
	// dev always set it.
	RouteKeys *hopauth.Keyring
}

// Validate checks the options and fills defaults in place.
func (o *Options) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxWaiting", int64(o.MaxWaiting)},
		{"MaxWait", int64(o.MaxWait)},
		{"StatsInterval", int64(o.StatsInterval)},
		{"ProbeTimeout", int64(o.ProbeTimeout)},
	} {
		if f.v < 0 {
			return fmt.Errorf("%w: %s must not be negative", ErrInvalidOptions, f.name)
		}
	}
	if o.Reporter == nil {
		o.Reporter = discard{}
	}
	if o.MaxWaiting == 0 {
		o.MaxWaiting = DefaultMaxWaiting
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.StatsInterval == 0 {
		o.StatsInterval = DefaultStatsInterval
	}
	if o.ProbeTimeout == 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}
