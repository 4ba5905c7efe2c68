package autoscaling

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		anns   map[string]string
		limits Limits
		want   Annotations
		errs   []string
	}{{
		name: "none: the KPA by default",
		want: Annotations{Class: ClassKPA},
	}, {
		name: "every key, Knative's spellings and an unknown one",
		anns: map[string]string{
			ClassAnnotationKey: ClassKPA, MetricAnnotationKey: MetricRPS, TargetAnnotationKey: "0.5", WindowAnnotationKey: "2m",
			MinScaleAnnotationKey: "1", MaxScaleAnnotationKey: "5", InitialScaleAnnotationKey: "2", ActivationScaleAnnotationKey: "3",
			TargetUtilizationPercentageAnnotationKey: "70", TargetBurstCapacityAnnotationKey: "-1",
			PanicWindowPercentageAnnotationKey: "10", PanicThresholdPercentageAnnotationKey: "200",
			ScaleDownDelayAnnotationKey: "15m", ScaleToZeroPodRetentionPeriodAnnotationKey: "1h",
			MetricAggregationAlgorithmAnnotationKey: AlgorithmWeightedExponential, Prefix + "custom": "anything",
		},
		want: Annotations{
			Class: ClassKPA, Metric: MetricRPS, MetricAggregationAlgorithm: AlgorithmWeightedExponential,
			Target: ptr.To(0.5), TargetUtilizationPercentage: ptr.To(70.0), PanicWindowPercentage: ptr.To(10.0),
			PanicThresholdPercentage: ptr.To(200.0), TargetBurstCapacity: ptr.To(-1.0),
			Window: ptr.To(2 * time.Minute), ScaleDownDelay: ptr.To(15 * time.Minute), ScaleToZeroPodRetentionPeriod: ptr.To(time.Hour),
			MinScale: ptr.To[int32](1), MaxScale: ptr.To[int32](5), InitialScale: ptr.To[int32](2), ActivationScale: ptr.To[int32](3),
		},
	}, {
		name: "legacy spellings",
		anns: map[string]string{Prefix + "minScale": "2", Prefix + "metricAggregationAlgorithm": AlgorithmWeightedExponentialLegacy},
		want: Annotations{Class: ClassKPA, MinScale: ptr.To[int32](2), MetricAggregationAlgorithm: AlgorithmWeightedExponentialLegacy},
	}, {
		name: "min-scale above max-scale names min-scale as written",
		anns: map[string]string{Prefix + "minScale": "5", MaxScaleAnnotationKey: "2"},
		want: Annotations{Class: ClassKPA, MinScale: ptr.To[int32](5), MaxScale: ptr.To[int32](2)},
		errs: []string{`autoscaling.knative.dev/minScale="5": min-scale=5 is greater than max-scale=2`},
	}, {
		name: "max-scale 0 is unlimited",
		anns: map[string]string{MinScaleAnnotationKey: "5", MaxScaleAnnotationKey: "0", ActivationScaleAnnotationKey: "9"},
		want: Annotations{Class: ClassKPA, MinScale: ptr.To[int32](5), MaxScale: ptr.To[int32](0), ActivationScale: ptr.To[int32](9)},
	}, {
		name:   "the cluster's cap on max-scale",
		anns:   map[string]string{MaxScaleAnnotationKey: "11"},
		limits: Limits{MaxScaleLimit: 10},
		want:   Annotations{Class: ClassKPA, MaxScale: ptr.To[int32](11)},
		errs:   []string{`autoscaling.knative.dev/max-scale="11": must be between 1 and 10 (config-autoscaler max-scale-limit)`},
	}, {
		name:   "unlimited max-scale under a cap",
		anns:   map[string]string{MaxScaleAnnotationKey: "0"},
		limits: Limits{MaxScaleLimit: 10},
		want:   Annotations{Class: ClassKPA, MaxScale: ptr.To[int32](0)},
		errs:   []string{`autoscaling.knative.dev/max-scale="0": max-scale=0 means unlimited, but this cluster caps max-scale at 10 (config-autoscaler max-scale-limit)`},
	}, {
		name: "initial-scale 0 where the cluster does not allow it",
		anns: map[string]string{InitialScaleAnnotationKey: "0"},
		want: Annotations{Class: ClassKPA, InitialScale: ptr.To[int32](0)},
		errs: []string{`autoscaling.knative.dev/initial-scale="0": initial-scale=0 is not allowed on this cluster (config-autoscaler allow-zero-initial-scale is false)`},
	}, {
		name:   "initial-scale 0 where it does",
		anns:   map[string]string{InitialScaleAnnotationKey: "0"},
		limits: Limits{AllowZeroInitialScale: true},
		want:   Annotations{Class: ClassKPA, InitialScale: ptr.To[int32](0)},
	}, {
		name: "activation-scale above max-scale",
		anns: map[string]string{ActivationScaleAnnotationKey: "3", MaxScaleAnnotationKey: "2"},
		want: Annotations{Class: ClassKPA, MaxScale: ptr.To[int32](2), ActivationScale: ptr.To[int32](3)},
		errs: []string{`autoscaling.knative.dev/activation-scale="3": activation-scale=3 is greater than max-scale=2`},
	}, {
		name: "an unknown class checks no metric",
		anns: map[string]string{ClassAnnotationKey: "custom.example.com", MetricAnnotationKey: "queue-depth", MetricAggregationAlgorithmAnnotationKey: "median"},
		want: Annotations{Class: "custom.example.com", Metric: "queue-depth"},
		errs: []string{`autoscaling.knative.dev/class="custom.example.com": supported values: ["kpa.autoscaling.knative.dev" "hpa.autoscaling.knative.dev"]`},
	}, {
		name: "the KPA does not scale on cpu, nor aggregate by median",
		anns: map[string]string{MetricAnnotationKey: "cpu", MetricAggregationAlgorithmAnnotationKey: "median"},
		want: Annotations{Class: ClassKPA},
		errs: []string{
			`autoscaling.knative.dev/metric="cpu": supported values: ["concurrency" "rps"]`,
			`autoscaling.knative.dev/metric-aggregation-algorithm="median": supported values: ["linear" "weighted-exponential"]`,
		},
	}, {
		name: "the HPA scales on cpu, has no window and needs a metric",
		anns: map[string]string{ClassAnnotationKey: ClassHPA, MetricAnnotationKey: "", WindowAnnotationKey: "60s"},
		want: Annotations{Class: ClassHPA},
		errs: []string{
			`autoscaling.knative.dev/metric="": the hpa.autoscaling.knative.dev class needs a metric: cpu, memory or a custom metric`,
			`autoscaling.knative.dev/window="60s": window is only used by the kpa.autoscaling.knative.dev class`,
		},
	}, {
		name: "every refusal, in order",
		anns: map[string]string{
			ClassAnnotationKey: ClassKPA, MetricAnnotationKey: "cpu", TargetAnnotationKey: "ten", WindowAnnotationKey: "5s",
			MinScaleAnnotationKey: "-1", MaxScaleAnnotationKey: "two", InitialScaleAnnotationKey: "x", ActivationScaleAnnotationKey: "0",
			Prefix + "targetUtilizationPercentage": "101", TargetBurstCapacityAnnotationKey: "-2",
			PanicWindowPercentageAnnotationKey: "0.5", PanicThresholdPercentageAnnotationKey: "100",
			ScaleDownDelayAnnotationKey: "1.5s", Prefix + "scaleToZeroPodRetentionPeriod": "2h", MetricAggregationAlgorithmAnnotationKey: "median",
		},
		want: Annotations{Class: ClassKPA},
		errs: []string{
			`autoscaling.knative.dev/metric="cpu": supported values: ["concurrency" "rps"]`,
			`autoscaling.knative.dev/min-scale="-1": must be between 0 and 2147483647`,
			`autoscaling.knative.dev/max-scale="two": must be an integer`,
			`autoscaling.knative.dev/initial-scale="x": must be an integer`,
			`autoscaling.knative.dev/activation-scale="0": must be between 1 and 2147483647`,
			`autoscaling.knative.dev/target="ten": must be a number`,
			`autoscaling.knative.dev/targetUtilizationPercentage="101": must be between 1 and 100`,
			`autoscaling.knative.dev/panic-window-percentage="0.5": must be between 1 and 100`,
			`autoscaling.knative.dev/panic-threshold-percentage="100": must be between 110 and 1000`,
			`autoscaling.knative.dev/target-burst-capacity="-2": must be -1 (keep the activator in the path) or a number of 0 or more`,
			`autoscaling.knative.dev/window="5s": must be between 6s and 1h0m0s`,
			`autoscaling.knative.dev/scale-down-delay="1.5s": must be a whole number of seconds`,
			`autoscaling.knative.dev/scaleToZeroPodRetentionPeriod="2h": must be between 0s and 1h0m0s`,
			`autoscaling.knative.dev/metric-aggregation-algorithm="median": supported values: ["linear" "weighted-exponential"]`,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := Parse(tc.anns, tc.limits)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if diff := cmp.Diff(tc.errs, msgs); diff != "" {
				t.Errorf("refusals (-want +got):\n%s", diff)
			}
		})
	}
}
