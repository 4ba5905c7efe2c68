package autoscaling

import "strings"

// GroupName is the annotation group; Prefix starts every key of it.
const (
	GroupName = "autoscaling.knative.dev"
	Prefix    = GroupName + "/"
)

// The per-Revision annotation keys, in Knative's kebab-case spelling.
const (
	ClassAnnotationKey                         = Prefix + "class"
	MetricAnnotationKey                        = Prefix + "metric"
	TargetAnnotationKey                        = Prefix + "target"
	TargetUtilizationPercentageAnnotationKey   = Prefix + "target-utilization-percentage"
	WindowAnnotationKey                        = Prefix + "window"
	PanicWindowPercentageAnnotationKey         = Prefix + "panic-window-percentage"
	PanicThresholdPercentageAnnotationKey      = Prefix + "panic-threshold-percentage"
	TargetBurstCapacityAnnotationKey           = Prefix + "target-burst-capacity"
	MinScaleAnnotationKey                      = Prefix + "min-scale"
	MaxScaleAnnotationKey                      = Prefix + "max-scale"
	InitialScaleAnnotationKey                  = Prefix + "initial-scale"
	ActivationScaleAnnotationKey               = Prefix + "activation-scale"
	ScaleDownDelayAnnotationKey                = Prefix + "scale-down-delay"
	ScaleToZeroPodRetentionPeriodAnnotationKey = Prefix + "scale-to-zero-pod-retention-period"
	MetricAggregationAlgorithmAnnotationKey    = Prefix + "metric-aggregation-algorithm"
)

// Values of the class annotation (and of config-autoscaler's
// pod-autoscaler-class).
const (
	ClassKPA = "kpa." + GroupName
	ClassHPA = "hpa." + GroupName
)

// Metrics the KPA scales on.
const (
	MetricConcurrency = "concurrency"
	MetricRPS         = "rps"
)

// The KPA's metric aggregation algorithms; Knative also accepts the
// camelCase AlgorithmWeightedExponentialLegacy.
const (
	AlgorithmLinear                    = "linear"
	AlgorithmWeightedExponential       = "weighted-exponential"
	AlgorithmWeightedExponentialLegacy = "weightedExponential"
)

// Key is one annotation: its name and, for the keys Knative renamed to
// kebab-case, the camelCase spelling older manifests use and Knative still
// reads (its kmap.KeyPriority). activation-scale came after the rename and
// has none.
type Key struct {
	Name, Legacy string
}

// Get returns the key as the user spelled it and its value, preferring the
// current spelling as Knative does, so that a refusal quotes what the user
// wrote.
func (k Key) Get(anns map[string]string) (key, value string, ok bool) {
	for _, name := range []string{k.Name, k.Legacy} {
		if name == "" {
			continue
		}
		if v, ok := anns[name]; ok {
			return name, v, true
		}
	}
	return "", "", false
}

// The keys, with Knative's legacy spellings and, for those with a value
// of their own kind, the values they accept (values.go).
var (
	ClassAnnotation                         = Key{Name: ClassAnnotationKey}
	MetricAnnotation                        = Key{Name: MetricAnnotationKey}
	MetricAggregationAlgorithmAnnotation    = Key{MetricAggregationAlgorithmAnnotationKey, Prefix + "metricAggregationAlgorithm"}
	TargetAnnotation                        = FloatKey{Key: Key{Name: TargetAnnotationKey}, Min: TargetMin, Max: inf}
	TargetUtilizationPercentageAnnotation   = FloatKey{Key: Key{TargetUtilizationPercentageAnnotationKey, Prefix + "targetUtilizationPercentage"}, Min: 1, Max: 100}
	PanicWindowPercentageAnnotation         = FloatKey{Key: Key{PanicWindowPercentageAnnotationKey, Prefix + "panicWindowPercentage"}, Min: PanicWindowPercentageMin, Max: PanicWindowPercentageMax}
	PanicThresholdPercentageAnnotation      = FloatKey{Key: Key{PanicThresholdPercentageAnnotationKey, Prefix + "panicThresholdPercentage"}, Min: PanicThresholdPercentageMin, Max: PanicThresholdPercentageMax}
	TargetBurstCapacityAnnotation           = FloatKey{Key: Key{TargetBurstCapacityAnnotationKey, Prefix + "targetBurstCapacity"}, Min: 0, Max: inf, orMinusOne: true}
	WindowAnnotation                        = DurationKey{Key: Key{Name: WindowAnnotationKey}, Min: WindowMin, Max: WindowMax}
	ScaleDownDelayAnnotation                = DurationKey{Key: Key{ScaleDownDelayAnnotationKey, Prefix + "scaleDownDelay"}, Min: 0, Max: WindowMax}
	ScaleToZeroPodRetentionPeriodAnnotation = DurationKey{Key: Key{ScaleToZeroPodRetentionPeriodAnnotationKey, Prefix + "scaleToZeroPodRetentionPeriod"}, Min: 0, Max: WindowMax}
	MinScaleAnnotation                      = IntKey{Key: Key{MinScaleAnnotationKey, Prefix + "minScale"}, Min: 0}
	MaxScaleAnnotation                      = IntKey{Key: Key{MaxScaleAnnotationKey, Prefix + "maxScale"}, Min: 0}
	InitialScaleAnnotation                  = IntKey{Key: Key{InitialScaleAnnotationKey, Prefix + "initialScale"}, Min: 0}
	ActivationScaleAnnotation               = IntKey{Key: Key{Name: ActivationScaleAnnotationKey}, Min: 1}
)

// Keys lists every key, in the order Duplicates reports them.
var Keys = []Key{
	ClassAnnotation, MetricAnnotation, TargetAnnotation.Key, WindowAnnotation.Key, MinScaleAnnotation.Key,
	MaxScaleAnnotation.Key, InitialScaleAnnotation.Key, ActivationScaleAnnotation.Key,
	TargetUtilizationPercentageAnnotation.Key, TargetBurstCapacityAnnotation.Key, PanicWindowPercentageAnnotation.Key,
	PanicThresholdPercentageAnnotation.Key, ScaleDownDelayAnnotation.Key, ScaleToZeroPodRetentionPeriodAnnotation.Key,
	MetricAggregationAlgorithmAnnotation,
}

// IsKnown reports whether key is an annotation of the group knit reads, in
// either spelling: Knative passes unknown ones through, and so does knit,
// but a typo there silently does nothing, so callers warn or refuse.
func IsKnown(key string) bool {
	if !strings.HasPrefix(key, Prefix) {
		return false
	}
	for _, k := range Keys {
		if key == k.Name || key == k.Legacy {
			return true
		}
	}
	return false
}

// Duplicates refuses both spellings of one key: which one wins would
// otherwise depend on a rule the user cannot see. Parse leaves this to its
// callers: the admission webhook refuses it, the KPA reads the current
// spelling of what was admitted.
func Duplicates(anns map[string]string) []*Error {
	var errs []*Error
	for _, k := range Keys {
		if k.Legacy == "" {
			continue
		}
		_, current := anns[k.Name]
		if legacy, ok := anns[k.Legacy]; ok && current {
			errs = append(errs, &Error{Key: k.Legacy, Value: legacy, Forbidden: true,
				Detail: k.Name + " is set too; set only one of the two spellings"})
		}
	}
	return errs
}
