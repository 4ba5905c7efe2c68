package webhooks

import (
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds Knative puts on autoscaling annotations.
const (
	targetMin = 0.01
	windowMin = 6 * time.Second
	windowMax = time.Hour
	maxInt32  = math.MaxInt32
)

// The KPA's metric aggregation algorithms; Knative also accepts the
// camelCase "weightedExponential".
const (
	algorithmLinear   = "linear"
	algorithmWeighted = "weighted-exponential"
)

// validateAutoscalingAnnotations is Knative's autoscaling.ValidateAnnotations
// over a Revision's (or template's) annotations at path; errors name the
// key as the user spelled it.
func validateAutoscalingAnnotations(anns map[string]string, path *field.Path, cfg Config) field.ErrorList {
	a := annotationCheck{anns: anns, path: path}
	a.duplicates()
	class := a.class()
	a.metric(class)
	a.scaleBounds(cfg)
	a.floatIn(targetKey, targetMin, math.Inf(1))
	a.floatIn(utilizationKey, 1, 100)
	a.floatIn(panicWindowKey, 1, 100)
	a.floatIn(panicThresholdKey, 110, 1000)
	a.burstCapacity()
	if a.durationIn(windowKey, windowMin, windowMax) && class == classHPA {
		k, v, _ := windowKey.get(anns)
		a.invalid(k, v, "window is only used by the "+classKPA+" class")
	}
	a.durationIn(scaleDownDelayKey, 0, windowMax)
	a.durationIn(retentionKey, 0, windowMax)
	a.algorithm(class)
	return a.errs
}

// annotationCheck collects the errors of one annotation map.
type annotationCheck struct {
	anns map[string]string
	path *field.Path
	errs field.ErrorList
}

func (a *annotationCheck) invalid(key, value, detail string) {
	a.errs = append(a.errs, field.Invalid(a.path.Key(key), value, detail))
}

// duplicates refuses both spellings of one key: which one wins would
// otherwise depend on a rule the user cannot see.
func (a *annotationCheck) duplicates() {
	for _, k := range autoscalingKeys {
		if k.legacy == "" {
			continue
		}
		if _, ok := a.anns[autoscalingGroup+k.name]; !ok {
			continue
		}
		if _, ok := a.anns[autoscalingGroup+k.legacy]; ok {
			a.errs = append(a.errs, field.Forbidden(a.path.Key(autoscalingGroup+k.legacy),
				fmt.Sprintf("%s%s is set too; set only one of the two spellings", autoscalingGroup, k.name)))
		}
	}
}

// class returns the autoscaler class in effect, KPA when unset.
func (a *annotationCheck) class() string {
	k, v, ok := classKey.get(a.anns)
	if !ok {
		return classKPA
	}
	if v != classKPA && v != classHPA {
		a.errs = append(a.errs, field.NotSupported(a.path.Key(k), v, []string{classKPA, classHPA}))
	}
	return v
}

// metric checks the metric against the class: the KPA scales on
// concurrency or rps; the HPA on cpu, memory or a custom metric.
func (a *annotationCheck) metric(class string) {
	k, v, ok := metricKey.get(a.anns)
	if !ok {
		return
	}
	switch class {
	case classKPA:
		if v != "concurrency" && v != "rps" {
			a.errs = append(a.errs, field.NotSupported(a.path.Key(k), v, []string{"concurrency", "rps"}))
		}
	case classHPA:
		if v == "" {
			a.invalid(k, v, "the "+classHPA+" class needs a metric: cpu, memory or a custom metric")
		}
	}
}

// algorithm checks the KPA's metric aggregation algorithm.
func (a *annotationCheck) algorithm(class string) {
	k, v, ok := algorithmKey.get(a.anns)
	if !ok || class != classKPA {
		return
	}
	if v != algorithmLinear && v != algorithmWeighted && v != "weightedExponential" {
		a.errs = append(a.errs, field.NotSupported(a.path.Key(k), v, []string{algorithmLinear, algorithmWeighted}))
	}
}

// scaleBounds checks min-, max-, initial- and activation-scale together.
func (a *annotationCheck) scaleBounds(cfg Config) {
	minK, minV, hasMin := minScaleKey.get(a.anns)
	maxK, maxV, hasMax := maxScaleKey.get(a.anns)
	lo, minOK := a.intIn(minScaleKey, 0, maxInt32)
	hi, maxOK := a.intIn(maxScaleKey, 0, maxInt32)
	if hasMin && hasMax && minOK && maxOK && hi > 0 && lo > hi {
		a.invalid(minK, minV, fmt.Sprintf("min-scale=%d is greater than max-scale=%d", lo, hi))
	}
	if hasMax && maxOK && cfg.MaxScaleLimit > 0 {
		switch {
		case hi == 0:
			a.invalid(maxK, maxV, fmt.Sprintf("max-scale=0 means unlimited, but this cluster caps max-scale at %d (config-autoscaler max-scale-limit)", cfg.MaxScaleLimit))
		case hi > int64(cfg.MaxScaleLimit):
			a.invalid(maxK, maxV, fmt.Sprintf("must be between 1 and %d (config-autoscaler max-scale-limit)", cfg.MaxScaleLimit))
		}
	}
	if k, v, ok := initialScaleKey.get(a.anns); ok {
		if n, ok := a.intIn(initialScaleKey, 0, maxInt32); ok && n == 0 && !cfg.AllowZeroInitialScale {
			a.invalid(k, v, "initial-scale=0 is not allowed on this cluster (config-autoscaler allow-zero-initial-scale is false)")
		}
	}
	if k, v, ok := activationScaleKey.get(a.anns); ok {
		if n, ok := a.intIn(activationScaleKey, 1, maxInt32); ok && hasMax && maxOK && hi > 0 && n > hi {
			a.invalid(k, v, fmt.Sprintf("activation-scale=%d is greater than max-scale=%d", n, hi))
		}
	}
}
