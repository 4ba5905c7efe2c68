package autoscaler

import (
	"errors"
	"fmt"
	"time"

	"github.com/knitops/knit/api/autoscaling"
)

// validation collects every range violation of one Config, each naming its key
// and the value as the user wrote it (or the default in force).
type validation struct {
	data map[string]string
	errs []error
}

func (v *validation) check(ok bool, key string, current any, reason string) {
	if ok {
		return
	}
	raw, set := v.data[key]
	if !set {
		raw = fmt.Sprint(current)
	}
	v.errs = append(v.errs, &FieldError{Source: SourceConfig, Key: key, Value: raw, Reason: reason})
}

// validate applies Knative's range checks on config-autoscaler.
func (c *Config) validate(data map[string]string) error {
	v := &validation{data: data}
	v.check(c.ScaleToZeroGracePeriod > 0, KeyScaleToZeroGracePeriod, c.ScaleToZeroGracePeriod, "must be positive")
	v.check(c.ScaleDownDelay >= 0, KeyScaleDownDelay, c.ScaleDownDelay, "must not be negative")
	v.check(c.ScaleDownDelay.Round(time.Second) == c.ScaleDownDelay, KeyScaleDownDelay, c.ScaleDownDelay, "must be whole seconds")
	v.check(c.ScaleToZeroPodRetentionPeriod >= 0, KeyScaleToZeroPodRetentionPeriod, c.ScaleToZeroPodRetentionPeriod, "must not be negative")
	v.check(c.TargetBurstCapacity >= 0 || c.TargetBurstCapacity == -1, KeyTargetBurstCapacity, c.TargetBurstCapacity, "must be at least 0, or -1 to keep the activator always in the path")
	v.check(c.ContainerConcurrencyTargetFraction > 0 && c.ContainerConcurrencyTargetFraction <= 1, KeyContainerConcurrencyTargetPct, c.ContainerConcurrencyTargetFraction*100, "must be in (0, 100]")
	if target := c.ContainerConcurrencyTargetFraction * c.ContainerConcurrencyTargetDefault; c.ContainerConcurrencyTargetFraction > 0 {
		v.check(target >= autoscaling.TargetMin, KeyContainerConcurrencyTargetDflt, c.ContainerConcurrencyTargetDefault,
			fmt.Sprintf("with %s gives a target of %g, below the minimum %g", KeyContainerConcurrencyTargetPct, target, autoscaling.TargetMin))
	}
	v.check(c.RPSTargetDefault >= autoscaling.TargetMin, KeyRPSTargetDefault, c.RPSTargetDefault, fmt.Sprintf("must be at least %g", autoscaling.TargetMin))
	v.check(c.ActivatorCapacity >= 1, KeyActivatorCapacity, c.ActivatorCapacity, "must be at least 1")
	v.check(c.MaxScaleUpRate > 1, KeyMaxScaleUpRate, c.MaxScaleUpRate, "must be greater than 1")
	v.check(c.MaxScaleDownRate > 1, KeyMaxScaleDownRate, c.MaxScaleDownRate, "must be greater than 1")
	v.check(c.StableWindow >= autoscaling.WindowMin && c.StableWindow <= autoscaling.WindowMax, KeyStableWindow, c.StableWindow, fmt.Sprintf("must be in [%v, %v]", autoscaling.WindowMin, autoscaling.WindowMax))
	v.check(c.StableWindow.Round(time.Second) == c.StableWindow, KeyStableWindow, c.StableWindow, "must be whole seconds")
	v.check(c.PanicWindowPercentage >= autoscaling.PanicWindowPercentageMin && c.PanicWindowPercentage <= autoscaling.PanicWindowPercentageMax,
		KeyPanicWindowPercentage, c.PanicWindowPercentage, fmt.Sprintf("must be in [%g, %g]", autoscaling.PanicWindowPercentageMin, autoscaling.PanicWindowPercentageMax))
	v.check(c.PanicThresholdPercentage >= autoscaling.PanicThresholdPercentageMin && c.PanicThresholdPercentage <= autoscaling.PanicThresholdPercentageMax,
		KeyPanicThresholdPercentage, c.PanicThresholdPercentage, fmt.Sprintf("must be in [%g, %g]", autoscaling.PanicThresholdPercentageMin, autoscaling.PanicThresholdPercentageMax))
	v.check(c.InitialScale >= 0, KeyInitialScale, c.InitialScale, "must not be negative")
	v.check(c.InitialScale != 0 || c.AllowZeroInitialScale, KeyInitialScale, c.InitialScale, "may be 0 only when "+KeyAllowZeroInitialScale+" is true")
	c.validateScaleBounds(v)
	return errors.Join(v.errs...)
}

// validateScaleBounds checks min-scale, max-scale and max-scale-limit together.
func (c *Config) validateScaleBounds(v *validation) {
	v.check(c.MaxScaleLimit >= 0, KeyMaxScaleLimit, c.MaxScaleLimit, "must not be negative")
	v.check(c.MaxScale >= 0, KeyMaxScale, c.MaxScale, "must not be negative")
	if c.MaxScaleLimit > 0 {
		v.check(c.MaxScale > 0 && c.MaxScale <= c.MaxScaleLimit, KeyMaxScale, c.MaxScale,
			fmt.Sprintf("must be in [1, %s=%d] when %s is set", KeyMaxScaleLimit, c.MaxScaleLimit, KeyMaxScaleLimit))
	}
	v.check(c.MinScale >= 0, KeyMinScale, c.MinScale, "must not be negative")
	v.check(c.MaxScale <= 0 || c.MinScale <= c.MaxScale, KeyMinScale, c.MinScale, fmt.Sprintf("must not exceed %s=%d", KeyMaxScale, c.MaxScale))
}
