package webhooks

// Config holds the knobs of Knative's config-defaults and config-autoscaler
// ConfigMaps that admission needs, so an operator's limits carry over from
// Knative with the same meaning.
type Config struct {
	// RevisionTimeoutSeconds is the timeoutSeconds a Revision gets when it
	// sets none (config-defaults revision-timeout-seconds).
	RevisionTimeoutSeconds int64
	// MaxRevisionTimeoutSeconds caps timeoutSeconds and idleTimeoutSeconds
	// (config-defaults max-revision-timeout-seconds).
	MaxRevisionTimeoutSeconds int64
	// ContainerConcurrencyMaxLimit caps containerConcurrency
	// (config-defaults container-concurrency-max-limit).
	ContainerConcurrencyMaxLimit int64
	// AllowZeroInitialScale lets autoscaling.knative.dev/initial-scale be 0
	// (config-autoscaler allow-zero-initial-scale).
	AllowZeroInitialScale bool
	// MaxScaleLimit caps autoscaling.knative.dev/max-scale; 0 means no cap
	// (config-autoscaler max-scale-limit).
	MaxScaleLimit int32
}

// DefaultConfig returns Knative's defaults for the knobs, which is what a
// cluster without config-defaults or config-autoscaler runs with.
func DefaultConfig() Config {
	return Config{
		RevisionTimeoutSeconds:       300,
		MaxRevisionTimeoutSeconds:    600,
		ContainerConcurrencyMaxLimit: 1000,
		AllowZeroInitialScale:        false,
		MaxScaleLimit:                0,
	}
}
