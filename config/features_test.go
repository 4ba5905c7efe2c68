package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFeatures(t *testing.T) {
	off := Features{PodSpecNodeSelector: FeatureDisabled, PodSpecTolerations: FeatureDisabled, PodSpecRuntimeClassName: FeatureDisabled, SecurePodDefaults: FeatureDisabled}
	tests := []struct {
		name    string
		data    map[string]string
		want    *Features
		wantErr string
	}{{
		name: "Knative defaults: every pod-spec field gated",
		want: &off,
	}, {
		name: "Knative's values, any case",
		data: map[string]string{"kubernetes.podspec-nodeselector": "enabled", "kubernetes.podspec-tolerations": "Allowed",
			"kubernetes.podspec-runtimeclassname": "Disabled", "kubernetes.podspec-affinity": "Enabled", "secure-pod-defaults": "Enabled"},
		want: &Features{PodSpecNodeSelector: FeatureEnabled, PodSpecTolerations: FeatureAllowed, PodSpecRuntimeClassName: FeatureDisabled, SecurePodDefaults: FeatureEnabled},
	}, {
		name:    "a typo is refused, not read as off",
		data:    map[string]string{"kubernetes.podspec-tolerations": "on"},
		wantErr: `config-features: kubernetes.podspec-tolerations="on": want Enabled, Allowed or Disabled`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFeatures(tc.data)
			checkErr(t, err, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseFeatures (-want +got):\n%s", diff)
			}
		})
	}
	if (Feature("")).On() {
		t.Error("the zero Feature is on; a Features nobody parsed must gate everything")
	}
}
