package autoscaler

import "strings"

// AnnotationPrefix is the domain of every per-revision autoscaling annotation.
const AnnotationPrefix = "autoscaling.knative.dev/"

// Per-revision annotations, in Knative's current kebab-case spelling.
const (
	ClassAnnotation                         = AnnotationPrefix + "class"
	MetricAnnotation                        = AnnotationPrefix + "metric"
	TargetAnnotation                        = AnnotationPrefix + "target"
	TargetUtilizationPercentageAnnotation   = AnnotationPrefix + "target-utilization-percentage"
	WindowAnnotation                        = AnnotationPrefix + "window"
	PanicWindowPercentageAnnotation         = AnnotationPrefix + "panic-window-percentage"
	PanicThresholdPercentageAnnotation      = AnnotationPrefix + "panic-threshold-percentage"
	TargetBurstCapacityAnnotation           = AnnotationPrefix + "target-burst-capacity"
	MinScaleAnnotation                      = AnnotationPrefix + "min-scale"
	MaxScaleAnnotation                      = AnnotationPrefix + "max-scale"
	InitialScaleAnnotation                  = AnnotationPrefix + "initial-scale"
	ActivationScaleAnnotation               = AnnotationPrefix + "activation-scale"
	ScaleDownDelayAnnotation                = AnnotationPrefix + "scale-down-delay"
	ScaleToZeroPodRetentionPeriodAnnotation = AnnotationPrefix + "scale-to-zero-pod-retention-period"
	MetricAggregationAlgorithmAnnotation    = AnnotationPrefix + "metric-aggregation-algorithm"
)

// Values of the class annotation (and of pod-autoscaler-class).
const (
	ClassKPA = "kpa.autoscaling.knative.dev"
	ClassHPA = "hpa.autoscaling.knative.dev"
)

// annotationAliases lists the legacy camelCase spellings Knative still reads
// for a key; the kebab-case key wins when both are present, as in Knative.
var annotationAliases = map[string][]string{
	TargetUtilizationPercentageAnnotation:   {AnnotationPrefix + "targetUtilizationPercentage"},
	PanicWindowPercentageAnnotation:         {AnnotationPrefix + "panicWindowPercentage"},
	PanicThresholdPercentageAnnotation:      {AnnotationPrefix + "panicThresholdPercentage"},
	TargetBurstCapacityAnnotation:           {AnnotationPrefix + "targetBurstCapacity"},
	MinScaleAnnotation:                      {AnnotationPrefix + "minScale"},
	MaxScaleAnnotation:                      {AnnotationPrefix + "maxScale"},
	InitialScaleAnnotation:                  {AnnotationPrefix + "initialScale"},
	ScaleDownDelayAnnotation:                {AnnotationPrefix + "scaleDownDelay"},
	ScaleToZeroPodRetentionPeriodAnnotation: {AnnotationPrefix + "scaleToZeroPodRetentionPeriod"},
	MetricAggregationAlgorithmAnnotation:    {AnnotationPrefix + "metricAggregationAlgorithm"},
}

var canonicalAnnotations = []string{
	ClassAnnotation, MetricAnnotation, TargetAnnotation, TargetUtilizationPercentageAnnotation,
	WindowAnnotation, PanicWindowPercentageAnnotation, PanicThresholdPercentageAnnotation,
	TargetBurstCapacityAnnotation, MinScaleAnnotation, MaxScaleAnnotation, InitialScaleAnnotation,
	ActivationScaleAnnotation, ScaleDownDelayAnnotation, ScaleToZeroPodRetentionPeriodAnnotation,
	MetricAggregationAlgorithmAnnotation,
}

// lookupAnnotation finds key or one of its aliases and returns the spelling
// actually used, so errors quote what the user wrote.
func lookupAnnotation(annotations map[string]string, key string) (used, value string, ok bool) {
	for _, k := range append([]string{key}, annotationAliases[key]...) {
		if v, found := annotations[k]; found {
			return k, v, true
		}
	}
	return "", "", false
}

// IsKnownAnnotation reports whether key is an autoscaling annotation knit
// reads, in either spelling, so tools can reject misspelt keys.
func IsKnownAnnotation(key string) bool {
	if !strings.HasPrefix(key, AnnotationPrefix) {
		return false
	}
	for _, k := range canonicalAnnotations {
		if k == key {
			return true
		}
		for _, alias := range annotationAliases[k] {
			if alias == key {
				return true
			}
		}
	}
	return false
}
