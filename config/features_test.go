package config

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFeatures(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		want    func(*Features)
		wantErr string
	}{{
		name: "Knative defaults",
		want: func(*Features) {},
	}, {
		name: "Knative's values, any case",
		data: map[string]string{"kubernetes.podspec-nodeselector": "enabled", "kubernetes.podspec-tolerations": "Allowed",
			"multi-container": "Disabled", "secure-pod-defaults": "Enabled"},
		want: func(f *Features) {
			f.PodSpecNodeSelector, f.PodSpecTolerations = FeatureEnabled, FeatureAllowed
			f.MultiContainer, f.SecurePodDefaults = FeatureDisabled, FeatureEnabled
		},
	}, {
		name: "a flag of a later Knative is ignored",
		data: map[string]string{"kubernetes.podspec-something-new": "Enabled"},
		want: func(*Features) {},
	}, {
		name:    "a typo is refused, not read as off",
		data:    map[string]string{"kubernetes.podspec-tolerations": "on"},
		wantErr: `config-features: kubernetes.podspec-tolerations="on": want Enabled, Allowed or Disabled`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFeatures(tc.data)
			checkErr(t, err, tc.wantErr)
			if tc.want == nil {
				return
			}
			want := DefaultFeatures()
			tc.want(&want)
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("ParseFeatures (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEveryFeatureFlag sets each of Knative's flags to each value and
// checks it lands in its own field alone, so no two keys share a field
// and none is left unread.
func TestEveryFeatureFlag(t *testing.T) {
	knative := map[string]Feature{ // Knative Serving 1.15's defaults
		"multi-container": FeatureEnabled, "multi-container-probing": FeatureDisabled,
		"kubernetes.podspec-affinity": FeatureDisabled, "kubernetes.podspec-topologyspreadconstraints": FeatureDisabled,
		"kubernetes.podspec-dryrun": FeatureAllowed, "kubernetes.podspec-hostaliases": FeatureDisabled,
		"kubernetes.podspec-fieldref": FeatureDisabled, "kubernetes.podspec-nodeselector": FeatureDisabled,
		"kubernetes.podspec-runtimeclassname": FeatureDisabled, "kubernetes.podspec-securitycontext": FeatureDisabled,
		"kubernetes.podspec-shareprocessnamespace": FeatureDisabled, "kubernetes.podspec-priorityclassname": FeatureDisabled,
		"kubernetes.podspec-schedulername": FeatureDisabled, "kubernetes.containerspec-addcapabilities": FeatureDisabled,
		"kubernetes.podspec-tolerations": FeatureDisabled, "kubernetes.podspec-volumes-emptydir": FeatureEnabled,
		"kubernetes.podspec-init-containers": FeatureDisabled, "kubernetes.podspec-persistent-volume-claim": FeatureDisabled,
		"kubernetes.podspec-persistent-volume-write": FeatureDisabled, "kubernetes.podspec-dnspolicy": FeatureDisabled,
		"kubernetes.podspec-dnsconfig": FeatureDisabled, "secure-pod-defaults": FeatureDisabled,
		"tag-header-based-routing": FeatureDisabled, "queueproxy.resource-defaults": FeatureDisabled,
		"queueproxy.mount-podinfo": FeatureDisabled, "autodetect-http2": FeatureDisabled,
	}
	if got := len(FeatureKeys()); got != len(knative) {
		t.Fatalf("knit reads %d config-features keys, Knative 1.15 has %d", got, len(knative))
	}
	defaults := DefaultFeatures()
	for _, key := range FeatureKeys() {
		def, ok := knative[key]
		if !ok {
			t.Errorf("%s is not a Knative 1.15 flag", key)
			continue
		}
		if got := *flagNamed(t, key).dst(&defaults); got != def {
			t.Errorf("%s defaults to %s, Knative's default is %s", key, got, def)
		}
		for _, v := range []Feature{FeatureEnabled, FeatureAllowed, FeatureDisabled} {
			t.Run(fmt.Sprintf("%s=%s", key, v), func(t *testing.T) {
				got, err := ParseFeatures(map[string]string{key: string(v)})
				if err != nil {
					t.Fatal(err)
				}
				want := DefaultFeatures()
				*flagNamed(t, key).dst(&want) = v
				if diff := cmp.Diff(&want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}

func flagNamed(t *testing.T, key string) featureFlag {
	t.Helper()
	for _, f := range featureFlags {
		if f.key == key {
			return f
		}
	}
	t.Fatalf("no flag %s", key)
	return featureFlag{}
}

func TestOptedIn(t *testing.T) {
	const key = DryRunAnnotation
	tests := []struct {
		flag Feature
		ann  map[string]string
		want bool
	}{
		{FeatureEnabled, nil, true},
		{FeatureDisabled, map[string]string{key: "enabled"}, false},
		{FeatureAllowed, nil, false},
		{FeatureAllowed, map[string]string{key: "Enabled"}, true},
		{FeatureAllowed, map[string]string{key: "disabled"}, false},
	}
	for _, tc := range tests {
		if got := OptedIn(tc.flag, tc.ann, key); got != tc.want {
			t.Errorf("OptedIn(%s, %v) = %v, want %v", tc.flag, tc.ann, got, tc.want)
		}
	}
}
