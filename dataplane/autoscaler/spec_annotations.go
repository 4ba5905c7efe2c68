package autoscaler

import (
	"fmt"
	"time"
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

// read resolves every annotation over cfg, recording one FieldError per bad
// value in r.errs.
func (r *annotationReader) read(cfg *Config) resolved {
	a := resolved{
		metric:                   MetricConcurrency,
		stableWindow:             cfg.StableWindow,
		panicWindowPercentage:    cfg.PanicWindowPercentage,
		panicThresholdPercentage: cfg.PanicThresholdPercentage,
		targetBurstCapacity:      cfg.TargetBurstCapacity,
		minScale:                 cfg.MinScale,
		maxScale:                 cfg.MaxScale,
		initialScale:             cfg.InitialScale,
		activationScale:          1,
		scaleDownDelay:           cfg.ScaleDownDelay,
		retention:                cfg.ScaleToZeroPodRetentionPeriod,
		aggregation:              AggregationLinear,
	}
	if used, v, ok := lookupAnnotation(r.annotations, MetricAnnotation); ok {
		a.metric = Metric(v)
		r.require(a.metric == MetricConcurrency || a.metric == MetricRPS, used, v, "must be concurrency or rps for class "+ClassKPA)
	}
	if used, v, ok := lookupAnnotation(r.annotations, MetricAggregationAlgorithmAnnotation); ok {
		var known bool
		a.aggregation, known = parseAggregation(v)
		r.require(known, used, v, "must be linear or weightedExponential")
	}
	a.target, a.hasTarget = r.float(TargetAnnotation, a.target, atLeast(TargetMin), fmt.Sprintf("must be at least %g", TargetMin))
	a.utilizationPercentage, a.hasUtilization = r.float(TargetUtilizationPercentageAnnotation, 0, within(1, 100), "must be in [1, 100]")
	a.panicWindowPercentage, _ = r.float(PanicWindowPercentageAnnotation, a.panicWindowPercentage,
		within(PanicWindowPercentageMin, PanicWindowPercentageMax), fmt.Sprintf("must be in [%g, %g]", PanicWindowPercentageMin, PanicWindowPercentageMax))
	a.panicThresholdPercentage, _ = r.float(PanicThresholdPercentageAnnotation, a.panicThresholdPercentage,
		within(PanicThresholdPercentageMin, PanicThresholdPercentageMax), fmt.Sprintf("must be in [%g, %g]", PanicThresholdPercentageMin, PanicThresholdPercentageMax))
	a.targetBurstCapacity, _ = r.float(TargetBurstCapacityAnnotation, a.targetBurstCapacity,
		func(v float64) bool { return v >= 0 || v == -1 }, "must be at least 0, or -1 to keep the activator always in the path")
	a.stableWindow, _ = r.duration(WindowAnnotation, a.stableWindow, WindowMin, WindowMax, true)
	a.scaleDownDelay, _ = r.duration(ScaleDownDelayAnnotation, a.scaleDownDelay, 0, WindowMax, true)
	a.retention, _ = r.duration(ScaleToZeroPodRetentionPeriodAnnotation, a.retention, 0, WindowMax, false)
	r.readScales(cfg, &a)
	return a
}

// readScales resolves min-, max-, initial- and activation-scale.
func (r *annotationReader) readScales(cfg *Config, a *resolved) {
	annMin, _ := r.int32(MinScaleAnnotation, 0, 0, "must be an integer of at least 0")
	annMax, hasMax := r.int32(MaxScaleAnnotation, 0, 0, "must be an integer of at least 0")
	if _, _, ok := r.has(MinScaleAnnotation); ok {
		a.minScale = annMin
	}
	if hasMax {
		a.maxScale = annMax
		used, raw, _ := lookupAnnotation(r.annotations, MaxScaleAnnotation)
		r.require(annMax == 0 || annMax >= annMin, used, raw, fmt.Sprintf("must not be below min-scale=%d", annMin))
		if cfg.MaxScaleLimit > 0 {
			r.require(annMax > 0 && annMax <= cfg.MaxScaleLimit, used, raw, fmt.Sprintf("must be in [1, %s=%d]", KeyMaxScaleLimit, cfg.MaxScaleLimit))
		}
	}
	if used, raw, ok := r.has(InitialScaleAnnotation); ok {
		v, _ := r.int32(InitialScaleAnnotation, a.initialScale, 0, "must be an integer of at least 0")
		r.require(v != 0 || cfg.AllowZeroInitialScale, used, raw, "may be 0 only when "+KeyAllowZeroInitialScale+" is true")
		a.initialScale = v
	}
	a.activationScale, _ = r.int32(ActivationScaleAnnotation, a.activationScale, 1, "must be an integer of at least 1")
}
