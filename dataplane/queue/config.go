package queue

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strconv"
	"time"
)

// Default ports, the same numbers Knative's queue-proxy uses.
const (
	DefaultServingPort = 8012
	DefaultAdminPort   = 8022
	DefaultMetricsPort = 9091
	DefaultUserPort    = 8080
)

// Defaults for settings a Revision normally supplies.
const (
	DefaultRevisionTimeout  = 300 * time.Second
	DefaultDrainQuietPeriod = 15 * time.Second

	// minQueueDepth is the smallest number of requests the breaker queues,
	// so that containerConcurrency=1 still absorbs a small burst.
	minQueueDepth = 100

	// MaxContainerConcurrency is the most CONTAINER_CONCURRENCY the
	// breaker can count (its slots are 32-bit); a larger value is refused,
	// not wrapped to a breaker of no slots.
	MaxContainerConcurrency = math.MaxInt32

	// maxDurationSeconds is the most seconds a time.Duration holds.
	maxDurationSeconds = math.MaxInt64 / int64(time.Second)
)

// Protocol is how the queue-proxy talks to the app.
type Protocol string

const (
	// ProtocolAuto mirrors the inbound request: HTTP/2 in, h2c out;
	// HTTP/1.x in, HTTP/1.1 out (Knative's auto transport).
	ProtocolAuto Protocol = ""
	// ProtocolH2C always speaks h2c (prior knowledge) to the app, as for a
	// container port named "h2c".
	ProtocolH2C Protocol = "h2c"
	// ProtocolHTTP1 always speaks HTTP/1.1 to the app, as for a container
	// port named "http1", even to requests that arrived over HTTP/2.
	ProtocolHTTP1 Protocol = "http1"
)

// Config is everything one queue-proxy needs. ConfigFromEnv reads it from
// Knative's environment variables; Validate checks it.
type Config struct {
	// ListenHost is the address the queue's own ports bind to; empty means
	// every interface (Kubernetes), "127.0.0.1" suits the local runtime.
	ListenHost string
	// ServingPort receives the app's traffic (QUEUE_SERVING_PORT).
	ServingPort int
	// AdminPort serves /healthz and /wait-for-drain (QUEUE_ADMIN_PORT).
	AdminPort int
	// MetricsPort serves /metrics and /stats (QUEUE_METRICS_PORT).
	MetricsPort int

	// UserPort is the app's port on 127.0.0.1 (USER_PORT).
	UserPort int
	// UserProtocol is how to speak to the app: the container port's name,
	// h2c or http1, forces one; empty mirrors the inbound request (USER_PORT_NAME).
	UserProtocol Protocol

	// ContainerConcurrency caps requests in flight to the app (at most
	// MaxContainerConcurrency); 0 is
	// unlimited (CONTAINER_CONCURRENCY).
	ContainerConcurrency int
	// QueueDepth is how many requests may wait for a slot beyond
	// ContainerConcurrency; 0 means max(10×ContainerConcurrency, 100).
	QueueDepth int

	// RevisionTimeout bounds a whole request; 0 is none (REVISION_TIMEOUT_SECONDS).
	RevisionTimeout time.Duration
	// ResponseStartTimeout bounds the wait for the first response byte; 0
	// is none (REVISION_RESPONSE_START_TIMEOUT_SECONDS).
	ResponseStartTimeout time.Duration
	// IdleTimeout bounds the gap between writes to the client; 0 is none
	// (REVISION_IDLE_TIMEOUT_SECONDS).
	IdleTimeout time.Duration

	// ReadinessProbe is the user container's readiness probe as Knative
	// encodes it: JSON of a corev1.Probe, or a JSON list of them
	// (SERVING_READINESS_PROBE). Empty means a TCP connect to UserPort.
	ReadinessProbe string
	// AutodetectHTTP2 makes an HTTP readiness probe ask the app for an
	// h2c upgrade first and probe over HTTP/2 when it agrees, so an app
	// that speaks only HTTP/2 is found ready (config-features
	// autodetect-http2; ENABLE_HTTP2_AUTO_DETECTION).
	AutodetectHTTP2 bool

	// DrainQuietPeriod is how long, after SIGTERM, the queue keeps serving
	// while answering probes unready, until no request arrived for this
	// long (QUEUE_DRAIN_QUIET_PERIOD_SECONDS). Kubernetes needs a few
	// seconds to take the pod out of its endpoints.
	DrainQuietPeriod time.Duration

	// EnableRequestLog logs one line per request (SERVING_ENABLE_REQUEST_LOG).
	EnableRequestLog bool
	// EnableProfiling serves net/http/pprof on the admin port (ENABLE_PROFILING).
	EnableProfiling bool
	// DisableFastPath sends every request through httputil.ReverseProxy,
	// as if none could take the HTTP/1 fast path (h1forward.go)
	// (QUEUE_DISABLE_FAST_PATH). It is a benchmarking and diagnostic
	// setting: make bench runs knit-queue with it to show the fast path's
	// gain on its own, and it rules the fast path out when an app
	// misbehaves behind the queue-proxy. Knative sets no such variable.
	DisableFastPath bool

	// Names reported in metrics and stats.
	Namespace     string // SERVING_NAMESPACE
	Service       string // SERVING_SERVICE
	Configuration string // SERVING_CONFIGURATION
	Revision      string // SERVING_REVISION
	Pod           string // SERVING_POD
	PodIP         string // SERVING_POD_IP

	// Logger receives lifecycle logs (and request logs when enabled); nil discards.
	Logger *slog.Logger
}

// ConfigFromEnv reads a Config from Knative's queue-proxy environment
// variables through getenv (os.Getenv in the binary, a map in tests),
// filling defaults for what is unset. It reports every malformed variable
// at once. Call Validate after applying any flag overrides.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		ListenHost:       getenv("QUEUE_LISTEN_HOST"),
		UserProtocol:     ProtocolAuto,
		ReadinessProbe:   getenv("SERVING_READINESS_PROBE"),
		Namespace:        getenv("SERVING_NAMESPACE"),
		Service:          getenv("SERVING_SERVICE"),
		Configuration:    getenv("SERVING_CONFIGURATION"),
		Revision:         getenv("SERVING_REVISION"),
		Pod:              getenv("SERVING_POD"),
		PodIP:            getenv("SERVING_POD_IP"),
		RevisionTimeout:  DefaultRevisionTimeout,
		DrainQuietPeriod: DefaultDrainQuietPeriod,
	}
	switch name := Protocol(getenv("USER_PORT_NAME")); name {
	case ProtocolH2C, ProtocolHTTP1:
		cfg.UserProtocol = name
	}
	var errs []error
	integer := func(name string, def int, dst *int) {
		*dst = def
		v := getenv(name)
		if v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not an integer", name, v))
			return
		}
		*dst = n
	}
	seconds := func(name string, dst *time.Duration) {
		def := int(*dst / time.Second)
		var n int
		integer(name, def, &n)
		if int64(n) > maxDurationSeconds {
			// A product past time.Duration's range would wrap into a short
			// (or negative) timeout that Validate could not tell apart.
			errs = append(errs, fmt.Errorf("%s: %d seconds is more than %d", name, n, maxDurationSeconds))
			return
		}
		*dst = time.Duration(n) * time.Second
	}
	boolean := func(name string, dst *bool) {
		v := getenv(name)
		if v == "" {
			return
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a boolean", name, v))
			return
		}
		*dst = b
	}
	integer("QUEUE_SERVING_PORT", DefaultServingPort, &cfg.ServingPort)
	integer("QUEUE_ADMIN_PORT", DefaultAdminPort, &cfg.AdminPort)
	integer("QUEUE_METRICS_PORT", DefaultMetricsPort, &cfg.MetricsPort)
	integer("USER_PORT", DefaultUserPort, &cfg.UserPort)
	integer("CONTAINER_CONCURRENCY", 0, &cfg.ContainerConcurrency)
	seconds("REVISION_TIMEOUT_SECONDS", &cfg.RevisionTimeout)
	seconds("REVISION_RESPONSE_START_TIMEOUT_SECONDS", &cfg.ResponseStartTimeout)
	seconds("REVISION_IDLE_TIMEOUT_SECONDS", &cfg.IdleTimeout)
	seconds("QUEUE_DRAIN_QUIET_PERIOD_SECONDS", &cfg.DrainQuietPeriod)
	boolean("SERVING_ENABLE_REQUEST_LOG", &cfg.EnableRequestLog)
	boolean("ENABLE_PROFILING", &cfg.EnableProfiling)
	boolean("QUEUE_DISABLE_FAST_PATH", &cfg.DisableFastPath)
	boolean("ENABLE_HTTP2_AUTO_DETECTION", &cfg.AutodetectHTTP2)
	return cfg, errors.Join(errs...)
}

// Validate reports every setting that cannot work, naming the environment
// variable it comes from.
func (c Config) Validate() error {
	var errs []error
	listenPort := func(name string, p int) {
		if p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("%s: %d is not a port (0-65535, 0 picks a free one)", name, p))
		}
	}
	listenPort("QUEUE_SERVING_PORT", c.ServingPort)
	listenPort("QUEUE_ADMIN_PORT", c.AdminPort)
	listenPort("QUEUE_METRICS_PORT", c.MetricsPort)
	seen := map[int]string{c.UserPort: "USER_PORT"}
	for _, p := range []struct {
		name string
		port int
	}{{"QUEUE_SERVING_PORT", c.ServingPort}, {"QUEUE_ADMIN_PORT", c.AdminPort}, {"QUEUE_METRICS_PORT", c.MetricsPort}} {
		if p.port == 0 {
			continue
		}
		if other, dup := seen[p.port]; dup {
			errs = append(errs, fmt.Errorf("%s: port %d is already %s", p.name, p.port, other))
			continue
		}
		seen[p.port] = p.name
	}
	if c.UserPort < 1 || c.UserPort > 65535 {
		errs = append(errs, fmt.Errorf("USER_PORT: %d is not a port (1-65535)", c.UserPort))
	}
	if c.ListenHost != "" && net.ParseIP(c.ListenHost) == nil && c.ListenHost != "localhost" {
		errs = append(errs, fmt.Errorf("QUEUE_LISTEN_HOST: %q is not an IP address", c.ListenHost))
	}
	switch c.UserProtocol {
	case ProtocolAuto, ProtocolH2C, ProtocolHTTP1:
	default:
		errs = append(errs, fmt.Errorf("user protocol %q: want %q, %q or empty", c.UserProtocol, ProtocolH2C, ProtocolHTTP1))
	}
	if c.ContainerConcurrency < 0 {
		errs = append(errs, fmt.Errorf("CONTAINER_CONCURRENCY: %d is negative (0 means unlimited)", c.ContainerConcurrency))
	}
	if c.ContainerConcurrency > MaxContainerConcurrency {
		// The breaker counts slots in 32 bits; Knative's bound is far lower
		// (config-defaults container-concurrency-max-limit, 1000).
		errs = append(errs, fmt.Errorf("CONTAINER_CONCURRENCY: %d is more than %d", c.ContainerConcurrency, MaxContainerConcurrency))
	}
	if c.QueueDepth < 0 {
		errs = append(errs, fmt.Errorf("queue depth: %d is negative (0 means 10×containerConcurrency)", c.QueueDepth))
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{
		{"REVISION_TIMEOUT_SECONDS", c.RevisionTimeout},
		{"REVISION_RESPONSE_START_TIMEOUT_SECONDS", c.ResponseStartTimeout},
		{"REVISION_IDLE_TIMEOUT_SECONDS", c.IdleTimeout},
		{"QUEUE_DRAIN_QUIET_PERIOD_SECONDS", c.DrainQuietPeriod},
	} {
		if d.d < 0 {
			errs = append(errs, fmt.Errorf("%s: %v is negative (0 means none)", d.name, d.d))
		}
	}
	if c.RevisionTimeout > 0 {
		if c.ResponseStartTimeout > c.RevisionTimeout {
			errs = append(errs, fmt.Errorf("REVISION_RESPONSE_START_TIMEOUT_SECONDS: %v is longer than REVISION_TIMEOUT_SECONDS %v", c.ResponseStartTimeout, c.RevisionTimeout))
		}
		if c.IdleTimeout > c.RevisionTimeout {
			errs = append(errs, fmt.Errorf("REVISION_IDLE_TIMEOUT_SECONDS: %v is longer than REVISION_TIMEOUT_SECONDS %v", c.IdleTimeout, c.RevisionTimeout))
		}
	}
	if _, err := parseProbes(c.ReadinessProbe, c.UserPort, c.AutodetectHTTP2); err != nil {
		errs = append(errs, fmt.Errorf("SERVING_READINESS_PROBE: %w", err))
	}
	return errors.Join(errs...)
}

// queueDepth is how many requests wait for a slot: Knative's 10×cc, at
// least minQueueDepth.
func (c Config) queueDepth() int {
	if c.QueueDepth > 0 {
		return c.QueueDepth
	}
	return max(10*c.ContainerConcurrency, minQueueDepth)
}

// userAddr is where the app listens.
func (c Config) userAddr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.UserPort))
}
