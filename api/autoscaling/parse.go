package autoscaling

import (
	"errors"
	"fmt"
	"time"
)

// Limits are the cluster's rules on scales (config-autoscaler), which the
// annotations are checked against.
type Limits struct {
	// MaxScaleLimit caps max-scale; 0 means no cap (max-scale-limit).
	MaxScaleLimit int32
	// AllowZeroInitialScale lets initial-scale be 0 (allow-zero-initial-scale).
	AllowZeroInitialScale bool
}

// Annotations are one Revision's autoscaling annotations, parsed. A value
// is nil (or "") when its annotation is absent or not a value its key
// accepts; a rule between keys (min-scale above max-scale) refuses without
// clearing them.
type Annotations struct {
	// Class in effect: ClassKPA when unset.
	Class string
	// Metric and MetricAggregationAlgorithm as written.
	Metric, MetricAggregationAlgorithm string

	Target, TargetUtilizationPercentage, PanicWindowPercentage, PanicThresholdPercentage, TargetBurstCapacity *float64
	Window, ScaleDownDelay, ScaleToZeroPodRetentionPeriod                                                     *time.Duration
	MinScale, MaxScale, InitialScale, ActivationScale                                                         *int32
}

// Parse reads every key of anns, Knative's autoscaling.ValidateAnnotations
// and the KPA's reading in one: each value against its key's bounds, the
// class's metric and algorithm, and the scales together under limits. It
// returns what it accepted and a refusal per bad value, in a fixed order.
// Keys outside the group, and unknown ones in it, are not its business
// (IsKnown), nor are both spellings of one key (Duplicates).
func Parse(anns map[string]string, limits Limits) (Annotations, []*Error) {
	p := &parser{anns: anns}
	a := Annotations{Class: p.class()}
	a.Metric = p.metric(a.Class)
	p.scales(&a, limits)
	a.Target = parsed(p, TargetAnnotation.Parse)
	a.TargetUtilizationPercentage = parsed(p, TargetUtilizationPercentageAnnotation.Parse)
	a.PanicWindowPercentage = parsed(p, PanicWindowPercentageAnnotation.Parse)
	a.PanicThresholdPercentage = parsed(p, PanicThresholdPercentageAnnotation.Parse)
	a.TargetBurstCapacity = parsed(p, TargetBurstCapacityAnnotation.Parse)
	if a.Window = parsed(p, WindowAnnotation.Parse); a.Window != nil && a.Class == ClassHPA {
		key, raw, _ := WindowAnnotation.Get(anns)
		p.refuse(&Error{Key: key, Value: raw, Detail: "window is only used by the " + ClassKPA + " class"})
		a.Window = nil
	}
	a.ScaleDownDelay = parsed(p, ScaleDownDelayAnnotation.Parse)
	a.ScaleToZeroPodRetentionPeriod = parsed(p, ScaleToZeroPodRetentionPeriodAnnotation.Parse)
	a.MetricAggregationAlgorithm = p.algorithm(a.Class)
	return a, p.errs
}

// parser collects the refusals of one annotation map.
type parser struct {
	anns map[string]string
	errs []*Error
}

func (p *parser) refuse(err error) {
	var e *Error
	if errors.As(err, &e) {
		p.errs = append(p.errs, e)
	}
}

// parsed runs one key's Parse, recording its refusal; nil when the key is
// absent or refused.
func parsed[T any](p *parser, parse func(map[string]string) (T, bool, error)) *T {
	v, ok, err := parse(p.anns)
	if err != nil {
		p.refuse(err)
	}
	if !ok || err != nil {
		return nil
	}
	return &v
}

// class is the class in effect, ClassKPA when unset; another value than
// Knative's two is refused (and returned, so no class-specific rule runs).
func (p *parser) class() string {
	key, v, ok := ClassAnnotation.Get(p.anns)
	if !ok {
		return ClassKPA
	}
	if v != ClassKPA && v != ClassHPA {
		p.refuse(&Error{Key: key, Value: v, Supported: []string{ClassKPA, ClassHPA}})
	}
	return v
}

// metric checks the metric against the class: the KPA scales on
// concurrency or rps, the HPA on cpu, memory or a custom metric.
func (p *parser) metric(class string) string {
	key, v, ok := MetricAnnotation.Get(p.anns)
	if !ok {
		return ""
	}
	switch {
	case class == ClassKPA && v != MetricConcurrency && v != MetricRPS:
		p.refuse(&Error{Key: key, Value: v, Supported: []string{MetricConcurrency, MetricRPS}})
		return ""
	case class == ClassHPA && v == "":
		p.refuse(&Error{Key: key, Value: v, Detail: "the " + ClassHPA + " class needs a metric: cpu, memory or a custom metric"})
	}
	return v
}

// algorithm checks the KPA's metric aggregation algorithm.
func (p *parser) algorithm(class string) string {
	key, v, ok := MetricAggregationAlgorithmAnnotation.Get(p.anns)
	if !ok || class != ClassKPA {
		return ""
	}
	if v != AlgorithmLinear && v != AlgorithmWeightedExponential && v != AlgorithmWeightedExponentialLegacy {
		p.refuse(&Error{Key: key, Value: v, Supported: []string{AlgorithmLinear, AlgorithmWeightedExponential}})
		return ""
	}
	return v
}

// scales reads min-, max-, initial- and activation-scale and checks them
// together: min-scale at most max-scale (0 is unlimited), max-scale within
// the cluster's cap, initial-scale 0 only where the cluster allows it,
// activation-scale at most max-scale.
func (p *parser) scales(a *Annotations, limits Limits) {
	a.MinScale = parsed(p, MinScaleAnnotation.Parse)
	a.MaxScale = parsed(p, MaxScaleAnnotation.Parse)
	lo, hi := a.MinScale, a.MaxScale
	if lo != nil && hi != nil && *hi > 0 && *lo > *hi {
		key, raw, _ := MinScaleAnnotation.Get(p.anns)
		p.refuse(&Error{Key: key, Value: raw, Detail: fmt.Sprintf("min-scale=%d is greater than max-scale=%d", *lo, *hi)})
	}
	if hi != nil && limits.MaxScaleLimit > 0 {
		key, raw, _ := MaxScaleAnnotation.Get(p.anns)
		switch {
		case *hi == 0:
			p.refuse(&Error{Key: key, Value: raw, Detail: fmt.Sprintf("max-scale=0 means unlimited, but this cluster caps max-scale at %d (config-autoscaler max-scale-limit)", limits.MaxScaleLimit)})
		case *hi > limits.MaxScaleLimit:
			p.refuse(&Error{Key: key, Value: raw, Detail: fmt.Sprintf("must be between 1 and %d (config-autoscaler max-scale-limit)", limits.MaxScaleLimit)})
		}
	}
	if a.InitialScale = parsed(p, InitialScaleAnnotation.Parse); a.InitialScale != nil && *a.InitialScale == 0 && !limits.AllowZeroInitialScale {
		key, raw, _ := InitialScaleAnnotation.Get(p.anns)
		p.refuse(&Error{Key: key, Value: raw, Detail: "initial-scale=0 is not allowed on this cluster (config-autoscaler allow-zero-initial-scale is false)"})
	}
	if a.ActivationScale = parsed(p, ActivationScaleAnnotation.Parse); a.ActivationScale != nil && hi != nil && *hi > 0 && *a.ActivationScale > *hi {
		key, raw, _ := ActivationScaleAnnotation.Get(p.anns)
		p.refuse(&Error{Key: key, Value: raw, Detail: fmt.Sprintf("activation-scale=%d is greater than max-scale=%d", *a.ActivationScale, *hi)})
	}
}
