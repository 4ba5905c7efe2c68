package autoscaler

import (
	"errors"
	"time"

	"github.com/knitops/knit/api/autoscaling"
)

// resolved holds each knob after the annotation (if any) has overridden the
// cluster config.
type resolved struct {
	metric                   Metric
	target                   float64
	hasTarget                bool
	utilizationPercentage    float64
	hasUtilization           bool
	stableWindow             time.Duration
	panicWindowPercentage    float64
	panicThresholdPercentage float64
	targetBurstCapacity      float64
	minScale, maxScale       int32
	initialScale             int32
	activationScale          int32
	scaleDownDelay           time.Duration
	retention                time.Duration
	aggregation              Aggregation
}

// readAnnotations resolves every annotation over cfg through the parser
// the admission webhook checks them with (package autoscaling), so the KPA
// refuses what admission refuses, in the same words, one FieldError per
// bad value.
func readAnnotations(cfg *Config, annotations map[string]string) (resolved, error) {
	p, refused := autoscaling.Parse(annotations, autoscaling.Limits{MaxScaleLimit: cfg.MaxScaleLimit, AllowZeroInitialScale: cfg.AllowZeroInitialScale})
	if len(refused) > 0 {
		errs := make([]error, len(refused))
		for i, e := range refused {
			errs[i] = &FieldError{Source: SourceAnnotation, Key: e.Key, Value: e.Value, Reason: e.Reason()}
		}
		return resolved{}, errors.Join(errs...)
	}
	a := resolved{
		metric:                   MetricConcurrency,
		stableWindow:             orDefault(p.Window, cfg.StableWindow),
		panicWindowPercentage:    orDefault(p.PanicWindowPercentage, cfg.PanicWindowPercentage),
		panicThresholdPercentage: orDefault(p.PanicThresholdPercentage, cfg.PanicThresholdPercentage),
		targetBurstCapacity:      orDefault(p.TargetBurstCapacity, cfg.TargetBurstCapacity),
		minScale:                 orDefault(p.MinScale, cfg.MinScale),
		maxScale:                 orDefault(p.MaxScale, cfg.MaxScale),
		initialScale:             orDefault(p.InitialScale, cfg.InitialScale),
		activationScale:          orDefault(p.ActivationScale, 1),
		scaleDownDelay:           orDefault(p.ScaleDownDelay, cfg.ScaleDownDelay),
		retention:                orDefault(p.ScaleToZeroPodRetentionPeriod, cfg.ScaleToZeroPodRetentionPeriod),
		aggregation:              AggregationLinear,
		target:                   orDefault(p.Target, 0),
		hasTarget:                p.Target != nil,
		utilizationPercentage:    orDefault(p.TargetUtilizationPercentage, 0),
		hasUtilization:           p.TargetUtilizationPercentage != nil,
	}
	if p.Metric != "" {
		a.metric = Metric(p.Metric)
	}
	if p.MetricAggregationAlgorithm != "" {
		a.aggregation, _ = parseAggregation(p.MetricAggregationAlgorithm)
	}
	return a, nil
}

// orDefault is *v, or def when the annotation was absent.
func orDefault[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}
