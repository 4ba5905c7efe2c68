package webhooks

import "github.com/knitops/knit/config"

// Config holds the knobs of Knative's config-defaults, config-autoscaler
// and config-features ConfigMaps that admission needs, so an operator's
// limits carry over from Knative with the same meaning.
type Config struct {
	// RevisionTimeoutSeconds is the timeoutSeconds a Revision gets when it
	// sets none (config-defaults revision-timeout-seconds).
	RevisionTimeoutSeconds int64
	// MaxRevisionTimeoutSeconds caps timeoutSeconds and idleTimeoutSeconds
	// (config-defaults max-revision-timeout-seconds).
	MaxRevisionTimeoutSeconds int64
	// ContainerConcurrency is the containerConcurrency a Revision gets when
	// it sets none (config-defaults container-concurrency).
	ContainerConcurrency int64
	// ContainerConcurrencyMaxLimit caps containerConcurrency
	// (config-defaults container-concurrency-max-limit).
	ContainerConcurrencyMaxLimit int64
	// AllowZeroInitialScale lets autoscaling.knative.dev/initial-scale be 0
	// (config-autoscaler allow-zero-initial-scale).
	AllowZeroInitialScale bool
	// MaxScaleLimit caps autoscaling.knative.dev/max-scale; 0 means no cap
	// (config-autoscaler max-scale-limit).
	MaxScaleLimit int32
	// Features gates the pod fields only an operator should let a
	// Revision set (config-features; the zero value gates them all).
	Features config.Features
}

// DefaultConfig returns Knative's defaults for the knobs, which is what a
// cluster without config-defaults or config-autoscaler runs with.
func DefaultConfig() Config {
	return Config{
		RevisionTimeoutSeconds:       300,
		MaxRevisionTimeoutSeconds:    600,
		ContainerConcurrency:         0,
		ContainerConcurrencyMaxLimit: 1000,
		AllowZeroInitialScale:        false,
		MaxScaleLimit:                0,
		Features:                     config.DefaultFeatures(),
	}
}

// Source hands admission the Config in force. Every request asks anew, so
// an operator's edit to config-defaults or config-autoscaler decides the
// next request, as the controllers already see it, without a restart.
type Source func() Config

// Static is a Source that never changes, for tests and tools without an
// API server to watch.
func Static(c Config) Source { return func() Config { return c } }

// FromStore reads the knobs from store, the one the controllers read and
// config's watcher keeps in step with knit-system's ConfigMaps.
func FromStore(store *config.Store) Source {
	return func() Config { return fromSnapshot(store.Load()) }
}

// fromSnapshot picks admission's knobs out of one config snapshot.
func fromSnapshot(c *config.Config) Config {
	return Config{
		RevisionTimeoutSeconds:       c.Defaults.RevisionTimeoutSeconds,
		MaxRevisionTimeoutSeconds:    c.Defaults.MaxRevisionTimeoutSeconds,
		ContainerConcurrency:         c.Defaults.ContainerConcurrency,
		ContainerConcurrencyMaxLimit: c.Defaults.ContainerConcurrencyMaxLimit,
		AllowZeroInitialScale:        c.Autoscaler.AllowZeroInitialScale,
		MaxScaleLimit:                c.Autoscaler.MaxScaleLimit,
		Features:                     *c.Features,
	}
}
