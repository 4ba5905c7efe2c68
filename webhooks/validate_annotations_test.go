package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateAutoscalingAnnotations(t *testing.T) {
	const p = "spec.template.metadata.annotations"
	limited := DefaultConfig()
	limited.MaxScaleLimit = 10
	zeroOK := DefaultConfig()
	zeroOK.AllowZeroInitialScale = true
	tests := []struct {
		name string
		anns map[string]string
		cfg  *Config
		want []string
	}{{
		name: "none",
	}, {
		name: "everything valid, Knative's spellings",
		anns: map[string]string{
			"autoscaling.knative.dev/class": "kpa.autoscaling.knative.dev", "autoscaling.knative.dev/metric": "rps",
			"autoscaling.knative.dev/target": "0.5", "autoscaling.knative.dev/window": "2m",
			"autoscaling.knative.dev/min-scale": "1", "autoscaling.knative.dev/max-scale": "5",
			"autoscaling.knative.dev/initial-scale": "2", "autoscaling.knative.dev/activation-scale": "3",
			"autoscaling.knative.dev/target-utilization-percentage": "70", "autoscaling.knative.dev/target-burst-capacity": "-1",
			"autoscaling.knative.dev/panic-window-percentage": "10", "autoscaling.knative.dev/panic-threshold-percentage": "200",
			"autoscaling.knative.dev/scale-down-delay": "15m", "autoscaling.knative.dev/scale-to-zero-pod-retention-period": "1h",
			"autoscaling.knative.dev/metric-aggregation-algorithm": "weighted-exponential",
			"autoscaling.knative.dev/custom":                       "anything",
		},
	}, {
		name: "min-scale above max-scale names min-scale",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "5", "autoscaling.knative.dev/max-scale": "2"},
		want: []string{p + `[autoscaling.knative.dev/min-scale]: Invalid value: "5": min-scale=5 is greater than max-scale=2`},
	}, {
		name: "legacy spellings are checked under the name the user wrote",
		anns: map[string]string{"autoscaling.knative.dev/minScale": "5", "autoscaling.knative.dev/maxScale": "2"},
		want: []string{p + `[autoscaling.knative.dev/minScale]: Invalid value: "5": min-scale=5 is greater than max-scale=2`},
	}, {
		name: "max-scale 0 is unlimited, so any min-scale fits",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "5", "autoscaling.knative.dev/max-scale": "0"},
	}, {
		name: "both spellings of one key",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "1", "autoscaling.knative.dev/minScale": "2"},
		want: []string{p + `[autoscaling.knative.dev/minScale]: Forbidden: autoscaling.knative.dev/min-scale is set too; set only one of the two spellings`},
	}, {
		name: "scales must be non-negative integers",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "-1", "autoscaling.knative.dev/max-scale": "two"},
		want: []string{
			p + `[autoscaling.knative.dev/min-scale]: Invalid value: "-1": must be between 0 and 2147483647`,
			p + `[autoscaling.knative.dev/max-scale]: Invalid value: "two": must be an integer`,
		},
	}, {
		name: "max-scale above the cluster's limit",
		anns: map[string]string{"autoscaling.knative.dev/max-scale": "11"},
		cfg:  &limited,
		want: []string{p + `[autoscaling.knative.dev/max-scale]: Invalid value: "11": must be between 1 and 10 (config-autoscaler max-scale-limit)`},
	}, {
		name: "unlimited max-scale under a cluster limit",
		anns: map[string]string{"autoscaling.knative.dev/max-scale": "0"},
		cfg:  &limited,
		want: []string{p + `[autoscaling.knative.dev/max-scale]: Invalid value: "0": max-scale=0 means unlimited, but this cluster caps max-scale at 10 (config-autoscaler max-scale-limit)`},
	}, {
		name: "initial-scale 0 is refused unless the cluster allows it",
		anns: map[string]string{"autoscaling.knative.dev/initialScale": "0"},
		want: []string{p + `[autoscaling.knative.dev/initialScale]: Invalid value: "0": initial-scale=0 is not allowed on this cluster (config-autoscaler allow-zero-initial-scale is false)`},
	}, {
		name: "initial-scale 0 where the cluster allows it",
		anns: map[string]string{"autoscaling.knative.dev/initial-scale": "0"},
		cfg:  &zeroOK,
	}, {
		name: "activation-scale at least 1 and within max-scale",
		anns: map[string]string{"autoscaling.knative.dev/activation-scale": "0"},
		want: []string{p + `[autoscaling.knative.dev/activation-scale]: Invalid value: "0": must be between 1 and 2147483647`},
	}, {
		name: "activation-scale above max-scale",
		anns: map[string]string{"autoscaling.knative.dev/activation-scale": "3", "autoscaling.knative.dev/max-scale": "2"},
		want: []string{p + `[autoscaling.knative.dev/activation-scale]: Invalid value: "3": activation-scale=3 is greater than max-scale=2`},
	}, {
		name: "unknown class",
		anns: map[string]string{"autoscaling.knative.dev/class": "custom.example.com"},
		want: []string{p + `[autoscaling.knative.dev/class]: Unsupported value: "custom.example.com": supported values: "kpa.autoscaling.knative.dev", "hpa.autoscaling.knative.dev"`},
	}, {
		name: "the KPA does not scale on cpu",
		anns: map[string]string{"autoscaling.knative.dev/metric": "cpu"},
		want: []string{p + `[autoscaling.knative.dev/metric]: Unsupported value: "cpu": supported values: "concurrency", "rps"`},
	}, {
		name: "the HPA scales on cpu, but has no window",
		anns: map[string]string{
			"autoscaling.knative.dev/class": "hpa.autoscaling.knative.dev", "autoscaling.knative.dev/metric": "cpu",
			"autoscaling.knative.dev/window": "60s",
		},
		want: []string{p + `[autoscaling.knative.dev/window]: Invalid value: "60s": window is only used by the kpa.autoscaling.knative.dev class`},
	}, {
		name: "numbers out of range",
		anns: map[string]string{
			"autoscaling.knative.dev/target": "0", "autoscaling.knative.dev/targetUtilizationPercentage": "101",
			"autoscaling.knative.dev/panic-window-percentage": "0.5", "autoscaling.knative.dev/panic-threshold-percentage": "100",
			"autoscaling.knative.dev/target-burst-capacity": "-2",
		},
		want: []string{
			p + `[autoscaling.knative.dev/target]: Invalid value: "0": must be at least 0.01`,
			p + `[autoscaling.knative.dev/targetUtilizationPercentage]: Invalid value: "101": must be between 1 and 100`,
			p + `[autoscaling.knative.dev/panic-window-percentage]: Invalid value: "0.5": must be between 1 and 100`,
			p + `[autoscaling.knative.dev/panic-threshold-percentage]: Invalid value: "100": must be between 110 and 1000`,
			p + `[autoscaling.knative.dev/target-burst-capacity]: Invalid value: "-2": must be -1 (keep the activator in the path) or a number of 0 or more`,
		},
	}, {
		name: "durations out of range or not whole seconds",
		anns: map[string]string{
			"autoscaling.knative.dev/window": "5s", "autoscaling.knative.dev/scale-down-delay": "1.5s",
			"autoscaling.knative.dev/scaleToZeroPodRetentionPeriod": "2h", "autoscaling.knative.dev/target": "ten",
		},
		want: []string{
			p + `[autoscaling.knative.dev/target]: Invalid value: "ten": must be a number`,
			p + `[autoscaling.knative.dev/window]: Invalid value: "5s": must be between 6s and 1h0m0s`,
			p + `[autoscaling.knative.dev/scale-down-delay]: Invalid value: "1.5s": must be a whole number of seconds`,
			p + `[autoscaling.knative.dev/scaleToZeroPodRetentionPeriod]: Invalid value: "2h": must be between 0s and 1h0m0s`,
		},
	}, {
		name: "unknown aggregation algorithm",
		anns: map[string]string{"autoscaling.knative.dev/metric-aggregation-algorithm": "median"},
		want: []string{p + `[autoscaling.knative.dev/metric-aggregation-algorithm]: Unsupported value: "median": supported values: "linear", "weighted-exponential"`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tc.cfg != nil {
				cfg = *tc.cfg
			}
			got := messages(validateAutoscalingAnnotations(tc.anns, field.NewPath("spec", "template", "metadata", "annotations"), cfg))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
