package autoscaler

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knitops/knit/api/autoscaling"
)

func TestNewConfigFromMapDefaults(t *testing.T) {
	want := &Config{
		PodAutoscalerClass:                 autoscaling.ClassKPA,
		EnableScaleToZero:                  true,
		ContainerConcurrencyTargetFraction: 0.7,
		ContainerConcurrencyTargetDefault:  100,
		RPSTargetDefault:                   200,
		TargetUtilization:                  0.7,
		TargetBurstCapacity:                211,
		ActivatorCapacity:                  100,
		StableWindow:                       60 * time.Second,
		PanicWindowPercentage:              10,
		PanicThresholdPercentage:           200,
		MaxScaleUpRate:                     1000,
		MaxScaleDownRate:                   2,
		ScaleToZeroGracePeriod:             30 * time.Second,
		InitialScale:                       1,
		TickInterval:                       2 * time.Second,
	}
	for name, data := range map[string]map[string]string{
		"nil":           nil,
		"empty":         {},
		"unknown keys":  {"_example": "# a long comment", "tick-interval": "5s"},
		"defaults same": {KeyStableWindow: "60s", KeyTargetBurstCapacity: "211", KeyContainerConcurrencyTargetPct: "70"},
	} {
		got, err := NewConfigFromMap(data)
		if err != nil {
			t.Fatalf("%s: NewConfigFromMap: %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: config (-want +got):\n%s", name, diff)
		}
	}
}

func TestNewConfigFromMapEveryKey(t *testing.T) {
	data := map[string]string{
		KeyPodAutoscalerClass:             autoscaling.ClassHPA,
		KeyEnableScaleToZero:              "false",
		KeyAllowZeroInitialScale:          "true",
		KeyContainerConcurrencyTargetPct:  "80",
		KeyContainerConcurrencyTargetDflt: "50",
		KeyRPSTargetDefault:               "150",
		KeyTargetBurstCapacity:            "-1",
		KeyActivatorCapacity:              "80",
		KeyStableWindow:                   "2m",
		KeyPanicWindowPercentage:          "20",
		KeyPanicThresholdPercentage:       "300",
		KeyMaxScaleUpRate:                 "10",
		KeyMaxScaleDownRate:               "4",
		KeyScaleToZeroGracePeriod:         "45s",
		KeyScaleToZeroPodRetentionPeriod:  "90s",
		KeyInitialScale:                   "0",
		KeyMinScale:                       "1",
		KeyMaxScale:                       "20",
		KeyMaxScaleLimit:                  "30",
		KeyScaleDownDelay:                 "15s",
	}
	want := &Config{
		PodAutoscalerClass:                 autoscaling.ClassHPA,
		EnableScaleToZero:                  false,
		AllowZeroInitialScale:              true,
		ContainerConcurrencyTargetFraction: 0.8,
		ContainerConcurrencyTargetDefault:  50,
		RPSTargetDefault:                   150,
		TargetUtilization:                  0.7,
		TargetBurstCapacity:                -1,
		ActivatorCapacity:                  80,
		StableWindow:                       2 * time.Minute,
		PanicWindowPercentage:              20,
		PanicThresholdPercentage:           300,
		MaxScaleUpRate:                     10,
		MaxScaleDownRate:                   4,
		ScaleToZeroGracePeriod:             45 * time.Second,
		ScaleToZeroPodRetentionPeriod:      90 * time.Second,
		InitialScale:                       0,
		MinScale:                           1,
		MaxScale:                           20,
		MaxScaleLimit:                      30,
		ScaleDownDelay:                     15 * time.Second,
		TickInterval:                       2 * time.Second,
	}
	got, err := NewConfigFromMap(data)
	if err != nil {
		t.Fatalf("NewConfigFromMap: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(len(data), len(ConfigKeys())); diff != "" {
		t.Errorf("the test must set every key in ConfigKeys (-want +got):\n%s", diff)
	}
}

func TestNewConfigFromMapLegacyFraction(t *testing.T) {
	for raw, want := range map[string]float64{"0.5": 0.5, "1": 1, "50": 0.5, "100": 1, "1.5": 0.015} {
		got, err := NewConfigFromMap(map[string]string{KeyContainerConcurrencyTargetPct: raw})
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if diff := cmp.Diff(want, got.ContainerConcurrencyTargetFraction); diff != "" {
			t.Errorf("%s: fraction (-want +got):\n%s", raw, diff)
		}
	}
}

func TestNewConfigFromMapErrors(t *testing.T) {
	for _, tc := range []struct {
		data map[string]string
		want string
	}{
		{map[string]string{KeyEnableScaleToZero: "yes please"}, `config-autoscaler enable-scale-to-zero="yes please": not a boolean (true or false)`},
		{map[string]string{KeyMaxScaleUpRate: "fast"}, `config-autoscaler max-scale-up-rate="fast": not a number`},
		{map[string]string{KeyMaxScale: "1.5"}, `config-autoscaler max-scale="1.5": not a 32-bit integer`},
		{map[string]string{KeyStableWindow: "60"}, `config-autoscaler stable-window="60": not a duration (like 30s or 1m)`},
		{map[string]string{KeyScaleToZeroGracePeriod: "0s"}, `config-autoscaler scale-to-zero-grace-period="0s": must be positive`},
		{map[string]string{KeyScaleDownDelay: "-1s"}, `config-autoscaler scale-down-delay="-1s": must not be negative`},
		{map[string]string{KeyScaleDownDelay: "1500ms"}, `config-autoscaler scale-down-delay="1500ms": must be whole seconds`},
		{map[string]string{KeyScaleToZeroPodRetentionPeriod: "-5s"}, `config-autoscaler scale-to-zero-pod-retention-period="-5s": must not be negative`},
		{map[string]string{KeyTargetBurstCapacity: "-2"}, `config-autoscaler target-burst-capacity="-2": must be at least 0, or -1 to keep the activator always in the path`},
		{map[string]string{KeyContainerConcurrencyTargetPct: "0"}, `config-autoscaler container-concurrency-target-percentage="0": must be in (0, 100]`},
		{map[string]string{KeyContainerConcurrencyTargetPct: "101"}, `config-autoscaler container-concurrency-target-percentage="101": must be in (0, 100]`},
		{map[string]string{KeyContainerConcurrencyTargetDflt: "0.001"}, `config-autoscaler container-concurrency-target-default="0.001": with container-concurrency-target-percentage gives a target of 0.0007, below the minimum 0.01`},
		{map[string]string{KeyRPSTargetDefault: "0"}, `config-autoscaler requests-per-second-target-default="0": must be at least 0.01`},
		{map[string]string{KeyActivatorCapacity: "0.5"}, `config-autoscaler activator-capacity="0.5": must be at least 1`},
		{map[string]string{KeyMaxScaleUpRate: "1"}, `config-autoscaler max-scale-up-rate="1": must be greater than 1`},
		{map[string]string{KeyMaxScaleDownRate: "0.5"}, `config-autoscaler max-scale-down-rate="0.5": must be greater than 1`},
		{map[string]string{KeyStableWindow: "5s"}, `config-autoscaler stable-window="5s": must be in [6s, 1h0m0s]`},
		{map[string]string{KeyStableWindow: "2h"}, `config-autoscaler stable-window="2h": must be in [6s, 1h0m0s]`},
		{map[string]string{KeyStableWindow: "6500ms"}, `config-autoscaler stable-window="6500ms": must be whole seconds`},
		{map[string]string{KeyPanicWindowPercentage: "0.5"}, `config-autoscaler panic-window-percentage="0.5": must be in [1, 100]`},
		{map[string]string{KeyPanicThresholdPercentage: "100"}, `config-autoscaler panic-threshold-percentage="100": must be in [110, 1000]`},
		{map[string]string{KeyInitialScale: "-1"}, `config-autoscaler initial-scale="-1": must not be negative`},
		{map[string]string{KeyInitialScale: "0"}, `config-autoscaler initial-scale="0": may be 0 only when allow-zero-initial-scale is true`},
		{map[string]string{KeyMaxScaleLimit: "-1"}, `config-autoscaler max-scale-limit="-1": must not be negative`},
		{map[string]string{KeyMaxScale: "-1"}, `config-autoscaler max-scale="-1": must not be negative`},
		{map[string]string{KeyMaxScaleLimit: "10"}, `config-autoscaler max-scale="0": must be in [1, max-scale-limit=10] when max-scale-limit is set`},
		{map[string]string{KeyMaxScaleLimit: "10", KeyMaxScale: "11"}, `config-autoscaler max-scale="11": must be in [1, max-scale-limit=10] when max-scale-limit is set`},
		{map[string]string{KeyMinScale: "-1"}, `config-autoscaler min-scale="-1": must not be negative`},
		{map[string]string{KeyMinScale: "5", KeyMaxScale: "3"}, `config-autoscaler min-scale="5": must not exceed max-scale=3`},
		{
			map[string]string{KeyMaxScaleUpRate: "x", KeyMaxScaleDownRate: "y"},
			"config-autoscaler max-scale-up-rate=\"x\": not a number\nconfig-autoscaler max-scale-down-rate=\"y\": not a number",
		},
	} {
		_, err := NewConfigFromMap(tc.data)
		if err == nil {
			t.Errorf("NewConfigFromMap(%v) = nil error, want %q", tc.data, tc.want)
			continue
		}
		if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
			t.Errorf("NewConfigFromMap(%v) error (-want +got):\n%s", tc.data, diff)
		}
	}
}

func TestConfigKeysSorted(t *testing.T) {
	if keys := ConfigKeys(); !slices.IsSorted(keys) || len(keys) != 20 {
		t.Errorf("ConfigKeys() = %v, want the 20 keys sorted", keys)
	}
}
