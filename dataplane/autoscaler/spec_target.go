package autoscaler

import (
	"fmt"
	"math"

	"github.com/knitops/knit/api/autoscaling"
)

// resolveTarget computes the per-pod target and total as Knative does: the
// concurrency metric starts from containerConcurrency (or the default target
// when unlimited) and the rps metric from the rps default; a target annotation
// replaces the total, but never above containerConcurrency; the target is the
// total times the utilization.
func resolveTarget(cfg *Config, a resolved, containerConcurrency int64) (target, total float64) {
	var utilization float64
	switch a.metric {
	case MetricRPS:
		total, utilization = cfg.RPSTargetDefault, cfg.TargetUtilization
	default:
		total, utilization = float64(containerConcurrency), cfg.ContainerConcurrencyTargetFraction
		if total == 0 {
			total = cfg.ContainerConcurrencyTargetDefault
		}
	}
	if a.hasTarget {
		total = a.target
		if a.metric == MetricConcurrency && containerConcurrency > 0 {
			total = math.Min(a.target, float64(containerConcurrency))
		}
	}
	if a.hasUtilization {
		utilization = a.utilizationPercentage / 100
	}
	return math.Max(autoscaling.TargetMin, total*utilization), total
}

// checkClass refuses revisions another autoscaler owns.
func checkClass(cfg *Config, annotations map[string]string) error {
	if used, class, ok := autoscaling.ClassAnnotation.Get(annotations); ok {
		if class != autoscaling.ClassKPA {
			return fmt.Errorf("%w: %w", ErrNotKPA, &FieldError{Source: SourceAnnotation, Key: used, Value: class, Reason: "knit's autoscaler decides only for " + autoscaling.ClassKPA})
		}
		return nil
	}
	if cfg.PodAutoscalerClass != autoscaling.ClassKPA {
		return fmt.Errorf("%w: %w", ErrNotKPA, &FieldError{Source: SourceConfig, Key: KeyPodAutoscalerClass, Value: cfg.PodAutoscalerClass, Reason: "knit's autoscaler decides only for " + autoscaling.ClassKPA})
	}
	return nil
}
