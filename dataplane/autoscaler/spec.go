package autoscaler

import (
	"errors"
	"time"

	"github.com/knitops/knit/api/autoscaling"
)

// Metric is what the KPA scales on.
type Metric string

// The two metrics the KPA class supports.
const (
	MetricConcurrency Metric = "concurrency"
	MetricRPS         Metric = "rps"
)

// DeciderSpec is everything the Decider needs for one revision, resolved from
// config-autoscaler, the revision's annotations and its containerConcurrency.
type DeciderSpec struct {
	Metric Metric
	// TargetValue is the per-pod value the KPA aims for: TotalValue times the
	// target utilization, never below autoscaling.TargetMin.
	TargetValue float64
	// TotalValue is what one pod can take: containerConcurrency, the default
	// target, or the target annotation (capped by containerConcurrency).
	TotalValue          float64
	TargetBurstCapacity float64
	// PanicThreshold is a ratio (200% is 2): panic starts when the panic-window
	// desired pods reach this multiple of the ready pods.
	PanicThreshold   float64
	MaxScaleUpRate   float64
	MaxScaleDownRate float64
	StableWindow     time.Duration
	PanicWindow      time.Duration
	ScaleDownDelay   time.Duration
	InitialScale     int32
	ActivationScale  int32
	// Reachable is false when no route sends traffic to the revision; then
	// the max scale down rate no longer holds pods back.
	Reachable    bool
	Aggregation  Aggregation
	TickInterval time.Duration
}

// ScalerSpec is what the PodAutoscaler reconciler needs on top of a Decision:
// the scale bounds and the scale-to-zero rules.
type ScalerSpec struct {
	MinScale     int32
	MaxScale     int32 // 0: unbounded
	InitialScale int32
	// Reachable is false when no route sends traffic to the revision; then
	// min-scale does not apply, as in Knative.
	Reachable                     bool
	EnableScaleToZero             bool
	StableWindow                  time.Duration
	ScaleToZeroGracePeriod        time.Duration
	ScaleToZeroPodRetentionPeriod time.Duration
	TargetBurstCapacity           float64
	// ActivationTimeout bounds how long a revision may stay Activating
	// before it is given up and scaled to zero.
	ActivationTimeout time.Duration
}

// Spec is the resolved autoscaling of one revision.
type Spec struct {
	Decider DeciderSpec
	Scaler  ScalerSpec
}

// DefaultActivationTimeout is Knative's: the default Deployment progress
// deadline (600s) plus a 30s buffer that lets the revision reconciler report
// the pod failure first.
const DefaultActivationTimeout = 630 * time.Second

// ErrNotKPA marks revisions whose autoscaler class is not the KPA; the caller
// should leave them alone rather than report a failure.
var ErrNotKPA = errors.New("autoscaler class is not " + autoscaling.ClassKPA)

// NewSpec resolves a revision's autoscaling from the cluster config, its
// autoscaling.knative.dev/* annotations (either spelling) and its
// containerConcurrency (0 means unlimited). Bad annotations are rejected with
// *FieldError values naming the key as written, using Knative's webhook rules.
func NewSpec(cfg *Config, annotations map[string]string, containerConcurrency int64) (Spec, error) {
	if containerConcurrency < 0 {
		return Spec{}, errors.New("containerConcurrency must not be negative")
	}
	if err := checkClass(cfg, annotations); err != nil {
		return Spec{}, err
	}
	a, err := readAnnotations(cfg, annotations)
	if err != nil {
		return Spec{}, err
	}
	target, total := resolveTarget(cfg, a, containerConcurrency)
	d := DeciderSpec{
		Metric:              a.metric,
		TargetValue:         target,
		TotalValue:          total,
		TargetBurstCapacity: a.targetBurstCapacity,
		PanicThreshold:      a.panicThresholdPercentage / 100,
		MaxScaleUpRate:      cfg.MaxScaleUpRate,
		MaxScaleDownRate:    cfg.MaxScaleDownRate,
		StableWindow:        a.stableWindow,
		PanicWindow:         panicWindow(a.stableWindow, a.panicWindowPercentage),
		ScaleDownDelay:      a.scaleDownDelay,
		InitialScale:        a.initialScale,
		ActivationScale:     a.activationScale,
		Reachable:           true,
		Aggregation:         a.aggregation,
		TickInterval:        cfg.TickInterval,
	}
	s := ScalerSpec{
		MinScale:                      a.minScale,
		MaxScale:                      a.maxScale,
		InitialScale:                  a.initialScale,
		Reachable:                     true,
		EnableScaleToZero:             cfg.EnableScaleToZero,
		StableWindow:                  a.stableWindow,
		ScaleToZeroGracePeriod:        cfg.ScaleToZeroGracePeriod,
		ScaleToZeroPodRetentionPeriod: a.retention,
		TargetBurstCapacity:           a.targetBurstCapacity,
		ActivationTimeout:             DefaultActivationTimeout,
	}
	return Spec{Decider: d, Scaler: s}, nil
}

// panicWindow is the stable window times the percentage, rounded to whole
// one-second buckets and at least one bucket, as Knative computes it.
func panicWindow(stable time.Duration, percentage float64) time.Duration {
	w := time.Duration(float64(stable) * percentage / 100).Round(bucketSize)
	return max(w, bucketSize)
}
