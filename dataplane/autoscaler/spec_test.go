package autoscaler

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knitops/knit/api/autoscaling"
)

// defaultSpec is what a revision with no annotations and containerConcurrency
// 0 gets under Knative's defaults.
func defaultSpec() Spec {
	return Spec{
		Decider: DeciderSpec{
			Metric:              MetricConcurrency,
			TargetValue:         70,
			TotalValue:          100,
			TargetBurstCapacity: 211,
			PanicThreshold:      2,
			MaxScaleUpRate:      1000,
			MaxScaleDownRate:    2,
			StableWindow:        60 * time.Second,
			PanicWindow:         6 * time.Second,
			InitialScale:        1,
			ActivationScale:     1,
			Reachable:           true,
			Aggregation:         AggregationLinear,
			TickInterval:        2 * time.Second,
		},
		Scaler: ScalerSpec{
			InitialScale:           1,
			Reachable:              true,
			EnableScaleToZero:      true,
			StableWindow:           60 * time.Second,
			ScaleToZeroGracePeriod: 30 * time.Second,
			TargetBurstCapacity:    211,
			ActivationTimeout:      DefaultActivationTimeout,
		},
	}
}

func TestNewSpec(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config map[string]string
		anns   map[string]string
		cc     int64
		want   func(*Spec)
	}{
		{name: "defaults", want: func(*Spec) {}},
		{name: "containerConcurrency is the total", cc: 10, want: func(s *Spec) {
			s.Decider.TotalValue, s.Decider.TargetValue = 10, 7
		}},
		{name: "target and utilization annotations", anns: map[string]string{autoscaling.TargetAnnotationKey: "10", autoscaling.TargetUtilizationPercentageAnnotationKey: "70"}, want: func(s *Spec) {
			s.Decider.TotalValue, s.Decider.TargetValue = 10, 7
		}},
		{name: "target capped by containerConcurrency", cc: 5, anns: map[string]string{autoscaling.TargetAnnotationKey: "50"}, want: func(s *Spec) {
			s.Decider.TotalValue, s.Decider.TargetValue = 5, 3.5
		}},
		{name: "target below containerConcurrency", cc: 50, anns: map[string]string{autoscaling.TargetAnnotationKey: "10"}, want: func(s *Spec) {
			s.Decider.TotalValue, s.Decider.TargetValue = 10, 7
		}},
		{name: "one request at a time", cc: 1, want: func(s *Spec) {
			s.Decider.TotalValue, s.Decider.TargetValue = 1, 0.7
		}},
		{name: "target floor", anns: map[string]string{autoscaling.TargetAnnotationKey: "0.01", autoscaling.TargetUtilizationPercentageAnnotationKey: "50"}, want: func(s *Spec) {
			s.Decider.TotalValue, s.Decider.TargetValue = 0.01, autoscaling.TargetMin
		}},
		{name: "config target default and percentage", config: map[string]string{KeyContainerConcurrencyTargetDflt: "20", KeyContainerConcurrencyTargetPct: "50"}, want: func(s *Spec) {
			s.Decider.TotalValue, s.Decider.TargetValue = 20, 10
		}},
		{name: "rps uses the rps default at 70%", cc: 10, anns: map[string]string{autoscaling.MetricAnnotationKey: "rps"}, want: func(s *Spec) {
			s.Decider.Metric, s.Decider.TotalValue, s.Decider.TargetValue = MetricRPS, 200, 140
		}},
		{name: "rps target is not capped by containerConcurrency", cc: 10, anns: map[string]string{autoscaling.MetricAnnotationKey: "rps", autoscaling.TargetAnnotationKey: "100", autoscaling.TargetUtilizationPercentageAnnotationKey: "50"}, want: func(s *Spec) {
			s.Decider.Metric, s.Decider.TotalValue, s.Decider.TargetValue = MetricRPS, 100, 50
		}},
		{name: "windows", anns: map[string]string{autoscaling.WindowAnnotationKey: "20s", autoscaling.PanicWindowPercentageAnnotationKey: "20", autoscaling.PanicThresholdPercentageAnnotationKey: "150"}, want: func(s *Spec) {
			s.Decider.StableWindow, s.Scaler.StableWindow = 20*time.Second, 20*time.Second
			s.Decider.PanicWindow, s.Decider.PanicThreshold = 4*time.Second, 1.5
		}},
		{name: "panic window is at least a bucket", anns: map[string]string{autoscaling.WindowAnnotationKey: "6s", autoscaling.PanicWindowPercentageAnnotationKey: "1"}, want: func(s *Spec) {
			s.Decider.StableWindow, s.Scaler.StableWindow = 6*time.Second, 6*time.Second
			s.Decider.PanicWindow = time.Second
		}},
		{name: "every kebab-case annotation", config: map[string]string{KeyAllowZeroInitialScale: "true"}, anns: map[string]string{
			autoscaling.ClassAnnotationKey: autoscaling.ClassKPA, autoscaling.TargetBurstCapacityAnnotationKey: "-1", autoscaling.MinScaleAnnotationKey: "2", autoscaling.MaxScaleAnnotationKey: "8",
			autoscaling.InitialScaleAnnotationKey: "0", autoscaling.ActivationScaleAnnotationKey: "3", autoscaling.ScaleDownDelayAnnotationKey: "30s",
			autoscaling.ScaleToZeroPodRetentionPeriodAnnotationKey: "1m30s", autoscaling.MetricAggregationAlgorithmAnnotationKey: "weightedExponential",
		}, want: func(s *Spec) {
			s.Decider.TargetBurstCapacity, s.Scaler.TargetBurstCapacity = -1, -1
			s.Scaler.MinScale, s.Scaler.MaxScale = 2, 8
			s.Decider.InitialScale, s.Scaler.InitialScale = 0, 0
			s.Decider.ActivationScale, s.Decider.ScaleDownDelay = 3, 30*time.Second
			s.Scaler.ScaleToZeroPodRetentionPeriod = 90 * time.Second
			s.Decider.Aggregation = AggregationWeightedExponential
		}},
		{name: "legacy camelCase aliases", anns: map[string]string{
			autoscaling.Prefix + "minScale": "1", autoscaling.Prefix + "maxScale": "4", autoscaling.Prefix + "initialScale": "3",
			autoscaling.Prefix + "targetUtilizationPercentage": "50", autoscaling.Prefix + "panicWindowPercentage": "50",
			autoscaling.Prefix + "panicThresholdPercentage": "400", autoscaling.Prefix + "targetBurstCapacity": "0",
			autoscaling.Prefix + "scaleDownDelay": "10s", autoscaling.Prefix + "scaleToZeroPodRetentionPeriod": "5s",
			autoscaling.Prefix + "metricAggregationAlgorithm": "weighted-exponential",
		}, want: func(s *Spec) {
			s.Scaler.MinScale, s.Scaler.MaxScale = 1, 4
			s.Decider.InitialScale, s.Scaler.InitialScale = 3, 3
			s.Decider.TargetValue = 50
			s.Decider.PanicWindow, s.Decider.PanicThreshold = 30*time.Second, 4
			s.Decider.TargetBurstCapacity, s.Scaler.TargetBurstCapacity = 0, 0
			s.Decider.ScaleDownDelay, s.Scaler.ScaleToZeroPodRetentionPeriod = 10*time.Second, 5*time.Second
			s.Decider.Aggregation = AggregationWeightedExponential
		}},
		{name: "kebab-case wins over its alias", anns: map[string]string{autoscaling.MinScaleAnnotationKey: "2", autoscaling.Prefix + "minScale": "5"}, want: func(s *Spec) {
			s.Scaler.MinScale = 2
		}},
		{name: "config scale knobs", config: map[string]string{
			KeyMinScale: "1", KeyMaxScale: "5", KeyInitialScale: "2", KeyScaleDownDelay: "4s",
			KeyEnableScaleToZero: "false", KeyScaleToZeroGracePeriod: "10s", KeyScaleToZeroPodRetentionPeriod: "20s",
			KeyMaxScaleUpRate: "3", KeyMaxScaleDownRate: "1.5",
		}, want: func(s *Spec) {
			s.Scaler.MinScale, s.Scaler.MaxScale = 1, 5
			s.Decider.InitialScale, s.Scaler.InitialScale = 2, 2
			s.Decider.ScaleDownDelay = 4 * time.Second
			s.Scaler.EnableScaleToZero = false
			s.Scaler.ScaleToZeroGracePeriod, s.Scaler.ScaleToZeroPodRetentionPeriod = 10*time.Second, 20*time.Second
			s.Decider.MaxScaleUpRate, s.Decider.MaxScaleDownRate = 3, 1.5
		}},
		{name: "annotation min above config max is accepted, as in Knative", config: map[string]string{KeyMaxScale: "3"}, anns: map[string]string{autoscaling.MinScaleAnnotationKey: "5"}, want: func(s *Spec) {
			s.Scaler.MinScale, s.Scaler.MaxScale = 5, 3
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := NewConfigFromMap(tc.config)
			if err != nil {
				t.Fatal(err)
			}
			want := defaultSpec()
			tc.want(&want)
			got, err := NewSpec(cfg, tc.anns, tc.cc)
			if err != nil {
				t.Fatalf("NewSpec: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		config map[string]string
		anns   map[string]string
		cc     int64
		want   string
	}{
		{anns: map[string]string{autoscaling.MetricAnnotationKey: "cpu"}, want: `annotation autoscaling.knative.dev/metric="cpu": supported values: ["concurrency" "rps"]`},
		{anns: map[string]string{autoscaling.TargetAnnotationKey: "0"}, want: `annotation autoscaling.knative.dev/target="0": must be at least 0.01`},
		{anns: map[string]string{autoscaling.TargetAnnotationKey: "ten"}, want: `annotation autoscaling.knative.dev/target="ten": must be a number`},
		{anns: map[string]string{autoscaling.TargetUtilizationPercentageAnnotationKey: "101"}, want: `annotation autoscaling.knative.dev/target-utilization-percentage="101": must be between 1 and 100`},
		{anns: map[string]string{autoscaling.Prefix + "targetUtilizationPercentage": "0"}, want: `annotation autoscaling.knative.dev/targetUtilizationPercentage="0": must be between 1 and 100`},
		{anns: map[string]string{autoscaling.WindowAnnotationKey: "5s"}, want: `annotation autoscaling.knative.dev/window="5s": must be between 6s and 1h0m0s`},
		{anns: map[string]string{autoscaling.WindowAnnotationKey: "10.5s"}, want: `annotation autoscaling.knative.dev/window="10.5s": must be a whole number of seconds`},
		{anns: map[string]string{autoscaling.WindowAnnotationKey: "soon"}, want: `annotation autoscaling.knative.dev/window="soon": must be a duration such as "60s" or "5m"`},
		{anns: map[string]string{autoscaling.PanicWindowPercentageAnnotationKey: "0"}, want: `annotation autoscaling.knative.dev/panic-window-percentage="0": must be between 1 and 100`},
		{anns: map[string]string{autoscaling.PanicThresholdPercentageAnnotationKey: "105"}, want: `annotation autoscaling.knative.dev/panic-threshold-percentage="105": must be between 110 and 1000`},
		{anns: map[string]string{autoscaling.TargetBurstCapacityAnnotationKey: "-3"}, want: `annotation autoscaling.knative.dev/target-burst-capacity="-3": must be -1 (keep the activator in the path) or a number of 0 or more`},
		{anns: map[string]string{autoscaling.MinScaleAnnotationKey: "-1"}, want: `annotation autoscaling.knative.dev/min-scale="-1": must be between 0 and 2147483647`},
		{anns: map[string]string{autoscaling.Prefix + "maxScale": "many"}, want: `annotation autoscaling.knative.dev/maxScale="many": must be an integer`},
		{anns: map[string]string{autoscaling.MinScaleAnnotationKey: "4", autoscaling.MaxScaleAnnotationKey: "2"}, want: `annotation autoscaling.knative.dev/min-scale="4": min-scale=4 is greater than max-scale=2`},
		{config: map[string]string{KeyMaxScaleLimit: "10", KeyMaxScale: "5"}, anns: map[string]string{autoscaling.MaxScaleAnnotationKey: "20"}, want: `annotation autoscaling.knative.dev/max-scale="20": must be between 1 and 10 (config-autoscaler max-scale-limit)`},
		{config: map[string]string{KeyMaxScaleLimit: "10", KeyMaxScale: "5"}, anns: map[string]string{autoscaling.MaxScaleAnnotationKey: "0"}, want: `annotation autoscaling.knative.dev/max-scale="0": max-scale=0 means unlimited, but this cluster caps max-scale at 10 (config-autoscaler max-scale-limit)`},
		{anns: map[string]string{autoscaling.InitialScaleAnnotationKey: "0"}, want: `annotation autoscaling.knative.dev/initial-scale="0": initial-scale=0 is not allowed on this cluster (config-autoscaler allow-zero-initial-scale is false)`},
		{anns: map[string]string{autoscaling.InitialScaleAnnotationKey: "-2"}, want: `annotation autoscaling.knative.dev/initial-scale="-2": must be between 0 and 2147483647`},
		{anns: map[string]string{autoscaling.ActivationScaleAnnotationKey: "0"}, want: `annotation autoscaling.knative.dev/activation-scale="0": must be between 1 and 2147483647`},
		{anns: map[string]string{autoscaling.ScaleDownDelayAnnotationKey: "2h"}, want: `annotation autoscaling.knative.dev/scale-down-delay="2h": must be between 0s and 1h0m0s`},
		{anns: map[string]string{autoscaling.ScaleDownDelayAnnotationKey: "1.5s"}, want: `annotation autoscaling.knative.dev/scale-down-delay="1.5s": must be a whole number of seconds`},
		{anns: map[string]string{autoscaling.ScaleToZeroPodRetentionPeriodAnnotationKey: "-1s"}, want: `annotation autoscaling.knative.dev/scale-to-zero-pod-retention-period="-1s": must be between 0s and 1h0m0s`},
		{anns: map[string]string{autoscaling.MetricAggregationAlgorithmAnnotationKey: "median"}, want: `annotation autoscaling.knative.dev/metric-aggregation-algorithm="median": supported values: ["linear" "weighted-exponential"]`},
		{cc: -1, want: `containerConcurrency must not be negative`},
		{
			anns: map[string]string{autoscaling.TargetAnnotationKey: "x", autoscaling.WindowAnnotationKey: "1s"},
			want: "annotation autoscaling.knative.dev/target=\"x\": must be a number\nannotation autoscaling.knative.dev/window=\"1s\": must be between 6s and 1h0m0s",
		},
	} {
		cfg, err := NewConfigFromMap(tc.config)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewSpec(cfg, tc.anns, tc.cc)
		if err == nil {
			t.Errorf("NewSpec(%v) = nil error, want %q", tc.anns, tc.want)
			continue
		}
		if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
			t.Errorf("NewSpec(%v) error (-want +got):\n%s", tc.anns, diff)
		}
	}
}

func TestNewSpecNotKPA(t *testing.T) {
	hpa, _ := NewConfigFromMap(map[string]string{KeyPodAutoscalerClass: autoscaling.ClassHPA})
	for _, tc := range []struct {
		cfg  *Config
		anns map[string]string
		want string
	}{
		{DefaultConfig(), map[string]string{autoscaling.ClassAnnotationKey: autoscaling.ClassHPA},
			`autoscaler class is not kpa.autoscaling.knative.dev: annotation autoscaling.knative.dev/class="hpa.autoscaling.knative.dev": knit's autoscaler decides only for kpa.autoscaling.knative.dev`},
		{hpa, nil,
			`autoscaler class is not kpa.autoscaling.knative.dev: config-autoscaler pod-autoscaler-class="hpa.autoscaling.knative.dev": knit's autoscaler decides only for kpa.autoscaling.knative.dev`},
	} {
		_, err := NewSpec(tc.cfg, tc.anns, 0)
		if !errors.Is(err, ErrNotKPA) {
			t.Errorf("NewSpec(%v) error = %v, want ErrNotKPA", tc.anns, err)
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("NewSpec(%v) error %v carries no *FieldError", tc.anns, err)
		}
		if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
	}
	// An hpa cluster default still lets a revision opt into the KPA.
	if _, err := NewSpec(hpa, map[string]string{autoscaling.ClassAnnotationKey: autoscaling.ClassKPA}, 0); err != nil {
		t.Errorf("NewSpec(kpa annotation on hpa cluster): %v", err)
	}
}
