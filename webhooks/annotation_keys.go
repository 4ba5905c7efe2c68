package webhooks

import (
	"slices"
	"strings"
)

// autoscalingGroup prefixes every autoscaling annotation.
const autoscalingGroup = "autoscaling.knative.dev/"

// The autoscaler classes Knative knows.
const (
	classKPA = "kpa.autoscaling.knative.dev"
	classHPA = "hpa.autoscaling.knative.dev"
)

// autoscalingKey is one autoscaling annotation: its name and, when Knative
// still accepts one, the camelCase spelling older manifests use.
type autoscalingKey struct {
	name, legacy string
}

// The autoscaling annotations Knative validates, with the legacy spellings
// of Knative's kmap.KeyPriority lists. activation-scale came after the
// camelCase names were retired and has none.
var (
	classKey           = autoscalingKey{name: "class"}
	metricKey          = autoscalingKey{name: "metric"}
	targetKey          = autoscalingKey{name: "target"}
	windowKey          = autoscalingKey{name: "window"}
	minScaleKey        = autoscalingKey{"min-scale", "minScale"}
	maxScaleKey        = autoscalingKey{"max-scale", "maxScale"}
	initialScaleKey    = autoscalingKey{"initial-scale", "initialScale"}
	activationScaleKey = autoscalingKey{name: "activation-scale"}
	utilizationKey     = autoscalingKey{"target-utilization-percentage", "targetUtilizationPercentage"}
	burstCapacityKey   = autoscalingKey{"target-burst-capacity", "targetBurstCapacity"}
	panicWindowKey     = autoscalingKey{"panic-window-percentage", "panicWindowPercentage"}
	panicThresholdKey  = autoscalingKey{"panic-threshold-percentage", "panicThresholdPercentage"}
	scaleDownDelayKey  = autoscalingKey{"scale-down-delay", "scaleDownDelay"}
	retentionKey       = autoscalingKey{"scale-to-zero-pod-retention-period", "scaleToZeroPodRetentionPeriod"}
	algorithmKey       = autoscalingKey{"metric-aggregation-algorithm", "metricAggregationAlgorithm"}
)

// autoscalingKeys lists every known key in the order errors are reported.
var autoscalingKeys = []autoscalingKey{
	classKey, metricKey, targetKey, windowKey, minScaleKey, maxScaleKey,
	initialScaleKey, activationScaleKey, utilizationKey, burstCapacityKey,
	panicWindowKey, panicThresholdKey, scaleDownDelayKey, retentionKey, algorithmKey,
}

// get returns the annotation's full key as the user spelled it and its
// value, preferring the current spelling as Knative's KeyPriority does.
func (k autoscalingKey) get(anns map[string]string) (key, value string, ok bool) {
	for _, n := range []string{k.name, k.legacy} {
		if n == "" {
			continue
		}
		if v, ok := anns[autoscalingGroup+n]; ok {
			return autoscalingGroup + n, v, true
		}
	}
	return "", "", false
}

// unknownAutoscalingAnnotations warns about autoscaling.knative.dev/ keys
// knit does not know, in sorted order: Knative passes them through, and so
// does knit, but a typo there silently does nothing.
func unknownAutoscalingAnnotations(anns map[string]string) []string {
	known := map[string]bool{}
	for _, k := range autoscalingKeys {
		known[k.name], known[k.legacy] = true, true
	}
	var warnings []string
	for key := range anns {
		name, ok := strings.CutPrefix(key, autoscalingGroup)
		if ok && !known[name] {
			warnings = append(warnings, "unknown annotation "+key+" is ignored")
		}
	}
	slices.Sort(warnings)
	return warnings
}
