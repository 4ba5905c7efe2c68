package autoscaler

import (
	"errors"
	"sort"
	"time"

	"github.com/knitops/knit/api/autoscaling"
)

// Keys of the config-autoscaler ConfigMap, spelled as Knative spells them so
// an existing Knative ConfigMap configures knit unchanged.
const (
	KeyPodAutoscalerClass             = "pod-autoscaler-class"
	KeyEnableScaleToZero              = "enable-scale-to-zero"
	KeyAllowZeroInitialScale          = "allow-zero-initial-scale"
	KeyContainerConcurrencyTargetPct  = "container-concurrency-target-percentage"
	KeyContainerConcurrencyTargetDflt = "container-concurrency-target-default"
	KeyRPSTargetDefault               = "requests-per-second-target-default"
	KeyTargetBurstCapacity            = "target-burst-capacity"
	KeyActivatorCapacity              = "activator-capacity"
	KeyStableWindow                   = "stable-window"
	KeyPanicWindowPercentage          = "panic-window-percentage"
	KeyPanicThresholdPercentage       = "panic-threshold-percentage"
	KeyMaxScaleUpRate                 = "max-scale-up-rate"
	KeyMaxScaleDownRate               = "max-scale-down-rate"
	KeyScaleToZeroGracePeriod         = "scale-to-zero-grace-period"
	KeyScaleToZeroPodRetentionPeriod  = "scale-to-zero-pod-retention-period"
	KeyInitialScale                   = "initial-scale"
	KeyMinScale                       = "min-scale"
	KeyMaxScale                       = "max-scale"
	KeyMaxScaleLimit                  = "max-scale-limit"
	KeyScaleDownDelay                 = "scale-down-delay"
)

// Config is the cluster-wide autoscaler configuration (config-autoscaler).
// Percentages the user writes are kept as fractions where the algorithm wants
// fractions, so no tick divides by 100.
type Config struct {
	PodAutoscalerClass    string
	EnableScaleToZero     bool
	AllowZeroInitialScale bool

	// ContainerConcurrencyTargetFraction is container-concurrency-target-percentage/100.
	ContainerConcurrencyTargetFraction float64
	ContainerConcurrencyTargetDefault  float64
	RPSTargetDefault                   float64
	// TargetUtilization is the utilization applied to the rps target. Knative
	// fixes it at 70% and offers no key for it; only the annotation overrides it.
	TargetUtilization   float64
	TargetBurstCapacity float64 // -1: activator always in path; 0: only at zero
	ActivatorCapacity   float64

	StableWindow             time.Duration
	PanicWindowPercentage    float64
	PanicThresholdPercentage float64
	MaxScaleUpRate           float64
	MaxScaleDownRate         float64

	ScaleToZeroGracePeriod        time.Duration
	ScaleToZeroPodRetentionPeriod time.Duration
	ScaleDownDelay                time.Duration

	InitialScale  int32
	MinScale      int32
	MaxScale      int32 // 0: unbounded
	MaxScaleLimit int32 // 0: no limit on max-scale

	// TickInterval is how often the decider runs. Knative hard-codes 2s and
	// offers no key; knit keeps it here so the live loop and the simulator
	// read it from one place.
	TickInterval time.Duration
}

// DefaultConfig returns Knative's defaults, what a cluster gets with an empty
// config-autoscaler.
func DefaultConfig() *Config {
	return &Config{
		PodAutoscalerClass:                 autoscaling.ClassKPA,
		EnableScaleToZero:                  true,
		ContainerConcurrencyTargetFraction: 0.7,
		ContainerConcurrencyTargetDefault:  100,
		RPSTargetDefault:                   200,
		TargetUtilization:                  0.7,
		TargetBurstCapacity:                211,
		ActivatorCapacity:                  100,
		StableWindow:                       60 * time.Second,
		PanicWindowPercentage:              10,
		PanicThresholdPercentage:           200,
		MaxScaleUpRate:                     1000,
		MaxScaleDownRate:                   2,
		ScaleToZeroGracePeriod:             30 * time.Second,
		InitialScale:                       1,
		TickInterval:                       2 * time.Second,
	}
}

// NewConfigFromMap parses a config-autoscaler ConfigMap's data over the
// defaults. Unknown keys (like Knative's `_example`) are ignored, as Knative
// does; every bad value is reported, each as a *FieldError naming its key.
func NewConfigFromMap(data map[string]string) (*Config, error) {
	c := DefaultConfig()
	var errs []error
	for _, f := range c.fields() {
		raw, ok := data[f.key]
		if !ok {
			continue
		}
		if reason := f.set(raw); reason != "" {
			errs = append(errs, &FieldError{Source: SourceConfig, Key: f.key, Value: raw, Reason: reason})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// Knative accepts the legacy fraction form (0, 1] as well as a percentage.
	if c.ContainerConcurrencyTargetFraction > 1 {
		c.ContainerConcurrencyTargetFraction /= 100
	}
	if err := c.validate(data); err != nil {
		return nil, err
	}
	return c, nil
}

// ConfigKeys lists every config-autoscaler key knit reads, sorted, so tools
// like the simulator can reject a misspelt key instead of ignoring it.
func ConfigKeys() []string {
	fields := DefaultConfig().fields()
	keys := make([]string, 0, len(fields))
	for _, f := range fields {
		keys = append(keys, f.key)
	}
	sort.Strings(keys)
	return keys
}
