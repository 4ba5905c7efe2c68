package webhooks

import (
	"context"
	"strings"
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
		want: []string{"invalid value: 5: " + p + "[autoscaling.knative.dev/min-scale]\nmin-scale=5 is greater than max-scale=2"},
	}, {
		name: "legacy spellings are checked under the name the user wrote",
		anns: map[string]string{"autoscaling.knative.dev/minScale": "5", "autoscaling.knative.dev/maxScale": "2"},
		want: []string{"invalid value: 5: " + p + "[autoscaling.knative.dev/minScale]\nmin-scale=5 is greater than max-scale=2"},
	}, {
		name: "max-scale 0 is unlimited, so any min-scale fits",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "5", "autoscaling.knative.dev/max-scale": "0"},
	}, {
		name: "both spellings of one key",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "1", "autoscaling.knative.dev/minScale": "2"},
		want: []string{"autoscaling.knative.dev/min-scale is set too; set only one of the two spellings: " + p + "[autoscaling.knative.dev/minScale]"},
	}, {
		name: "scales must be non-negative integers",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "-1", "autoscaling.knative.dev/max-scale": "two"},
		want: []string{
			"invalid value: -1: " + p + "[autoscaling.knative.dev/min-scale]\nmust be between 0 and 2147483647",
			"invalid value: two: " + p + "[autoscaling.knative.dev/max-scale]\nmust be an integer",
		},
	}, {
		name: "max-scale above the cluster's limit",
		anns: map[string]string{"autoscaling.knative.dev/max-scale": "11"},
		cfg:  &limited,
		want: []string{"invalid value: 11: " + p + "[autoscaling.knative.dev/max-scale]\nmust be between 1 and 10 (config-autoscaler max-scale-limit)"},
	}, {
		name: "unlimited max-scale under a cluster limit",
		anns: map[string]string{"autoscaling.knative.dev/max-scale": "0"},
		cfg:  &limited,
		want: []string{"invalid value: 0: " + p + "[autoscaling.knative.dev/max-scale]\nmax-scale=0 means unlimited, but this cluster caps max-scale at 10 (config-autoscaler max-scale-limit)"},
	}, {
		name: "initial-scale 0 is refused unless the cluster allows it",
		anns: map[string]string{"autoscaling.knative.dev/initialScale": "0"},
		want: []string{"invalid value: 0: " + p + "[autoscaling.knative.dev/initialScale]\ninitial-scale=0 is not allowed on this cluster (config-autoscaler allow-zero-initial-scale is false)"},
	}, {
		name: "initial-scale 0 where the cluster allows it",
		anns: map[string]string{"autoscaling.knative.dev/initial-scale": "0"},
		cfg:  &zeroOK,
	}, {
		name: "activation-scale at least 1 and within max-scale",
		anns: map[string]string{"autoscaling.knative.dev/activation-scale": "0"},
		want: []string{"invalid value: 0: " + p + "[autoscaling.knative.dev/activation-scale]\nmust be between 1 and 2147483647"},
	}, {
		name: "activation-scale above max-scale",
		anns: map[string]string{"autoscaling.knative.dev/activation-scale": "3", "autoscaling.knative.dev/max-scale": "2"},
		want: []string{"invalid value: 3: " + p + "[autoscaling.knative.dev/activation-scale]\nactivation-scale=3 is greater than max-scale=2"},
	}, {
		name: "unknown class",
		anns: map[string]string{"autoscaling.knative.dev/class": "custom.example.com"},
		want: []string{"invalid value: custom.example.com: " + p + "[autoscaling.knative.dev/class]\nsupported values: \"kpa.autoscaling.knative.dev\", \"hpa.autoscaling.knative.dev\""},
	}, {
		name: "the KPA does not scale on cpu",
		anns: map[string]string{"autoscaling.knative.dev/metric": "cpu"},
		want: []string{"invalid value: cpu: " + p + "[autoscaling.knative.dev/metric]\nsupported values: \"concurrency\", \"rps\""},
	}, {
		name: "the HPA scales on cpu, but has no window",
		anns: map[string]string{
			"autoscaling.knative.dev/class": "hpa.autoscaling.knative.dev", "autoscaling.knative.dev/metric": "cpu",
			"autoscaling.knative.dev/window": "60s",
		},
		want: []string{"invalid value: 60s: " + p + "[autoscaling.knative.dev/window]\nwindow is only used by the kpa.autoscaling.knative.dev class"},
	}, {
		name: "numbers out of range",
		anns: map[string]string{
			"autoscaling.knative.dev/target": "0", "autoscaling.knative.dev/targetUtilizationPercentage": "101",
			"autoscaling.knative.dev/panic-window-percentage": "0.5", "autoscaling.knative.dev/panic-threshold-percentage": "100",
			"autoscaling.knative.dev/target-burst-capacity": "-2",
		},
		want: []string{
			"invalid value: 0: " + p + "[autoscaling.knative.dev/target]\nmust be at least 0.01",
			"invalid value: 101: " + p + "[autoscaling.knative.dev/targetUtilizationPercentage]\nmust be between 1 and 100",
			"invalid value: 0.5: " + p + "[autoscaling.knative.dev/panic-window-percentage]\nmust be between 1 and 100",
			"invalid value: 100: " + p + "[autoscaling.knative.dev/panic-threshold-percentage]\nmust be between 110 and 1000",
			"invalid value: -2: " + p + "[autoscaling.knative.dev/target-burst-capacity]\nmust be -1 (keep the activator in the path) or a number of 0 or more",
		},
	}, {
		name: "durations out of range or not whole seconds",
		anns: map[string]string{
			"autoscaling.knative.dev/window": "5s", "autoscaling.knative.dev/scale-down-delay": "1.5s",
			"autoscaling.knative.dev/scaleToZeroPodRetentionPeriod": "2h", "autoscaling.knative.dev/target": "ten",
		},
		want: []string{
			"invalid value: ten: " + p + "[autoscaling.knative.dev/target]\nmust be a number",
			"invalid value: 5s: " + p + "[autoscaling.knative.dev/window]\nmust be between 6s and 1h0m0s",
			"invalid value: 1.5s: " + p + "[autoscaling.knative.dev/scale-down-delay]\nmust be a whole number of seconds",
			"invalid value: 2h: " + p + "[autoscaling.knative.dev/scaleToZeroPodRetentionPeriod]\nmust be between 0s and 1h0m0s",
		},
	}, {
		name: "unknown aggregation algorithm",
		anns: map[string]string{"autoscaling.knative.dev/metric-aggregation-algorithm": "median"},
		want: []string{"invalid value: median: " + p + "[autoscaling.knative.dev/metric-aggregation-algorithm]\nsupported values: \"linear\", \"weighted-exponential\""},
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

// A Service whose queue-proxy annotations the reconciler could not apply
// is refused, naming the annotation.
func TestServiceWithBadQueueSidecarAnnotationIsRefused(t *testing.T) {
	s := service("hello", defaultedSpec(), latest(100))
	s.Spec.Template.Annotations = map[string]string{
		"queue.sidecar.serving.knative.dev/cpu-resource-request":  "lots",
		"queue.sidecar.serving.knative.dev/memory-resource-limit": "800Mi",
	}
	_, err := serviceHooks().ValidateCreate(context.Background(), s)
	want := `invalid value: lots: spec.template.metadata.annotations[queue.sidecar.serving.knative.dev/cpu-resource-request]` + "\nwant a quantity such as 100m or 400Mi"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want it to contain %q", err, want)
	}
	s.Spec.Template.Annotations["queue.sidecar.serving.knative.dev/cpu-resource-request"] = "100m"
	if _, err := serviceHooks().ValidateCreate(context.Background(), s); err != nil {
		t.Errorf("valid annotations refused: %v", err)
	}
}
