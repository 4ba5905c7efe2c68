package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/config"
)

// A Revision may not pick its nodes, tolerate taints or choose a runtime
// class unless the operator turned the matching config-features flag on,
// as in Knative, whose defaults leave them all off.
func TestSchedulingFieldsAreGatedByFeatures(t *testing.T) {
	const p = "spec.template.spec"
	scheduled := defaultedSpec()
	scheduled.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
	scheduled.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	scheduled.RuntimeClassName = ptr.To("runc")
	on := DefaultConfig()
	on.Features = config.Features{PodSpecNodeSelector: config.FeatureEnabled, PodSpecTolerations: config.FeatureAllowed,
		PodSpecRuntimeClassName: config.FeatureEnabled}
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{{
		name: "Knative's defaults refuse them",
		cfg:  DefaultConfig(),
		want: []string{
			"must not set the field(s): " + p + ".nodeSelector\nconfig-features kubernetes.podspec-nodeselector is Disabled",
			"must not set the field(s): " + p + ".runtimeClassName\nconfig-features kubernetes.podspec-runtimeclassname is Disabled",
			"must not set the field(s): " + p + ".tolerations\nconfig-features kubernetes.podspec-tolerations is Disabled",
		},
	}, {
		name: "Enabled or Allowed accept them",
		cfg:  on,
	}, {
		name: "a Config nobody filled in refuses them",
		cfg:  Config{ContainerConcurrencyMaxLimit: 1000, MaxRevisionTimeoutSeconds: 600},
		want: []string{
			"must not set the field(s): " + p + ".nodeSelector\nconfig-features kubernetes.podspec-nodeselector is Disabled",
			"must not set the field(s): " + p + ".runtimeClassName\nconfig-features kubernetes.podspec-runtimeclassname is Disabled",
			"must not set the field(s): " + p + ".tolerations\nconfig-features kubernetes.podspec-tolerations is Disabled",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateRevisionSpec(scheduled, field.NewPath("spec", "template", "spec"), tc.cfg))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	// An empty map or list is not a request to schedule anywhere.
	empty := defaultedSpec()
	empty.NodeSelector, empty.Tolerations = map[string]string{}, []corev1.Toleration{}
	if errs := validateRevisionSpec(empty, field.NewPath("spec"), DefaultConfig()); len(errs) > 0 {
		t.Errorf("empty nodeSelector and tolerations refused: %v", errs)
	}
}
