package autoscaler

import "time"

// field binds one config-autoscaler key to the Config member it sets; set
// returns a non-empty reason when the raw value does not parse.
type field struct {
	key string
	set func(raw string) string
}

func (c *Config) fields() []field {
	return []field{
		{KeyPodAutoscalerClass, func(raw string) string { c.PodAutoscalerClass = raw; return "" }},
		{KeyEnableScaleToZero, asBool(&c.EnableScaleToZero)},
		{KeyAllowZeroInitialScale, asBool(&c.AllowZeroInitialScale)},
		{KeyContainerConcurrencyTargetPct, asFloat(&c.ContainerConcurrencyTargetFraction)},
		{KeyContainerConcurrencyTargetDflt, asFloat(&c.ContainerConcurrencyTargetDefault)},
		{KeyRPSTargetDefault, asFloat(&c.RPSTargetDefault)},
		{KeyTargetBurstCapacity, asFloat(&c.TargetBurstCapacity)},
		{KeyActivatorCapacity, asFloat(&c.ActivatorCapacity)},
		{KeyStableWindow, asDuration(&c.StableWindow)},
		{KeyPanicWindowPercentage, asFloat(&c.PanicWindowPercentage)},
		{KeyPanicThresholdPercentage, asFloat(&c.PanicThresholdPercentage)},
		{KeyMaxScaleUpRate, asFloat(&c.MaxScaleUpRate)},
		{KeyMaxScaleDownRate, asFloat(&c.MaxScaleDownRate)},
		{KeyScaleToZeroGracePeriod, asDuration(&c.ScaleToZeroGracePeriod)},
		{KeyScaleToZeroPodRetentionPeriod, asDuration(&c.ScaleToZeroPodRetentionPeriod)},
		{KeyInitialScale, asInt32(&c.InitialScale)},
		{KeyMinScale, asInt32(&c.MinScale)},
		{KeyMaxScale, asInt32(&c.MaxScale)},
		{KeyMaxScaleLimit, asInt32(&c.MaxScaleLimit)},
		{KeyScaleDownDelay, asDuration(&c.ScaleDownDelay)},
	}
}

func asBool(dst *bool) func(string) string {
	return func(raw string) (reason string) { *dst, reason = parseBool(raw); return reason }
}

func asFloat(dst *float64) func(string) string {
	return func(raw string) (reason string) { *dst, reason = parseFloat(raw); return reason }
}

func asInt32(dst *int32) func(string) string {
	return func(raw string) (reason string) { *dst, reason = parseInt32(raw); return reason }
}

func asDuration(dst *time.Duration) func(string) string {
	return func(raw string) (reason string) { *dst, reason = parseDuration(raw); return reason }
}
