package autoscaling

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Every key with a value of its own kind, its valid and refused values.
// want is the value parsed, or the refusal's detail.
func TestParseValues(t *testing.T) {
	type parse func(map[string]string) (any, bool, error)
	ints := func(k IntKey) parse {
		return func(m map[string]string) (any, bool, error) { v, ok, err := k.Parse(m); return v, ok, err }
	}
	floats := func(k FloatKey) parse {
		return func(m map[string]string) (any, bool, error) { v, ok, err := k.Parse(m); return v, ok, err }
	}
	durations := func(k DurationKey) parse {
		return func(m map[string]string) (any, bool, error) { v, ok, err := k.Parse(m); return v, ok, err }
	}
	type value struct {
		raw  string
		want any // the value, or the refusal's detail (a string)
	}
	const notInt, notNumber = "must be an integer", "must be a number"
	const notDuration, notWhole = `must be a duration such as "60s" or "5m"`, "must be a whole number of seconds"
	const burst = "must be -1 (keep the activator in the path) or a number of 0 or more"
	tests := []struct {
		key    Key
		parse  parse
		values []value
	}{
		{MinScaleAnnotation.Key, ints(MinScaleAnnotation), []value{{"0", int32(0)}, {"3", int32(3)}, {"2147483647", int32(2147483647)},
			{"-1", "must be between 0 and 2147483647"}, {"2147483648", "must be between 0 and 2147483647"}, {"two", notInt}, {"1.5", notInt}, {"", notInt},
			{"99999999999999999999", notInt}}},
		{MaxScaleAnnotation.Key, ints(MaxScaleAnnotation), []value{{"0", int32(0)}, {"10", int32(10)}, {"-5", "must be between 0 and 2147483647"}, {"many", notInt}}},
		{InitialScaleAnnotation.Key, ints(InitialScaleAnnotation), []value{{"0", int32(0)}, {"2", int32(2)}, {"-2", "must be between 0 and 2147483647"}, {" 1", notInt}}},
		{ActivationScaleAnnotation.Key, ints(ActivationScaleAnnotation), []value{{"1", int32(1)}, {"3", int32(3)}, {"0", "must be between 1 and 2147483647"}, {"x", notInt}}},
		{TargetAnnotation.Key, floats(TargetAnnotation), []value{{"0.01", 0.01}, {"100", 100.0}, {"1e6", 1e6},
			{"0", "must be at least 0.01"}, {"-1", "must be at least 0.01"}, {"ten", notNumber}, {"NaN", notNumber}, {"Inf", notNumber}, {"+Inf", notNumber}}},
		{TargetUtilizationPercentageAnnotation.Key, floats(TargetUtilizationPercentageAnnotation), []value{{"1", 1.0}, {"70", 70.0}, {"100", 100.0},
			{"0", "must be between 1 and 100"}, {"101", "must be between 1 and 100"}, {"seventy", notNumber}}},
		{PanicWindowPercentageAnnotation.Key, floats(PanicWindowPercentageAnnotation), []value{{"1", 1.0}, {"10", 10.0}, {"100", 100.0},
			{"0.5", "must be between 1 and 100"}, {"100.5", "must be between 1 and 100"}, {"", notNumber}}},
		{PanicThresholdPercentageAnnotation.Key, floats(PanicThresholdPercentageAnnotation), []value{{"110", 110.0}, {"200", 200.0}, {"1000", 1000.0},
			{"100", "must be between 110 and 1000"}, {"1001", "must be between 110 and 1000"}, {"-Inf", notNumber}}},
		{TargetBurstCapacityAnnotation.Key, floats(TargetBurstCapacityAnnotation), []value{{"-1", -1.0}, {"0", 0.0}, {"211", 211.0}, {"0.5", 0.5},
			{"-2", burst}, {"-0.5", burst}, {"lots", burst}, {"Inf", burst}}},
		{WindowAnnotation.Key, durations(WindowAnnotation), []value{{"6s", 6 * time.Second}, {"60s", time.Minute}, {"1h", time.Hour},
			{"5s", "must be between 6s and 1h0m0s"}, {"61m", "must be between 6s and 1h0m0s"}, {"10.5s", notWhole}, {"60", notDuration}, {"soon", notDuration}}},
		{ScaleDownDelayAnnotation.Key, durations(ScaleDownDelayAnnotation), []value{{"0s", time.Duration(0)}, {"15m", 15 * time.Minute},
			{"-1s", "must be between 0s and 1h0m0s"}, {"2h", "must be between 0s and 1h0m0s"}, {"1.5s", notWhole}, {"x", notDuration}}},
		{ScaleToZeroPodRetentionPeriodAnnotation.Key, durations(ScaleToZeroPodRetentionPeriodAnnotation), []value{{"0s", time.Duration(0)}, {"1m30s", 90 * time.Second},
			{"-1s", "must be between 0s and 1h0m0s"}, {"2h", "must be between 0s and 1h0m0s"}, {"0.5s", notWhole}, {"1 min", notDuration}}},
	}
	for _, tc := range tests {
		t.Run(tc.key.Name, func(t *testing.T) {
			if _, ok, err := tc.parse(nil); ok || err != nil {
				t.Errorf("absent: present %v, err %v; want neither", ok, err)
			}
			for _, spelling := range []string{tc.key.Name, tc.key.Legacy} {
				if spelling == "" {
					continue
				}
				for _, v := range tc.values {
					got, ok, err := tc.parse(map[string]string{spelling: v.raw})
					var gotValue any = got
					if err != nil {
						e := err.(*Error)
						if e.Key != spelling || e.Value != v.raw {
							t.Errorf("%s=%q: refusal names %s=%q, want the key and value as written", spelling, v.raw, e.Key, e.Value)
						}
						gotValue = e.Detail
					}
					if !ok {
						t.Errorf("%s=%q: not present", spelling, v.raw)
					}
					if diff := cmp.Diff(v.want, gotValue); diff != "" {
						t.Errorf("%s=%q (-want +got):\n%s", spelling, v.raw, diff)
					}
				}
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Key: MinScaleAnnotationKey, Value: "-1", Detail: "must be between 0 and 2147483647"},
			`autoscaling.knative.dev/min-scale="-1": must be between 0 and 2147483647`},
		{&Error{Key: MetricAnnotationKey, Value: "cpu", Supported: []string{MetricConcurrency, MetricRPS}},
			`autoscaling.knative.dev/metric="cpu": supported values: ["concurrency" "rps"]`},
		{&Error{Key: Prefix + "minScale", Value: "1", Forbidden: true, Detail: "min-scale is set too"},
			`autoscaling.knative.dev/minScale: min-scale is set too`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %s, want %s", got, tc.want)
		}
	}
}
