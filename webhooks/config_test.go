package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knitops/knit/config"
)

// FromStore answers with the store's current snapshot on every call, so
// an accepted ConfigMap edit reaches the next admission request.
func TestFromStoreFollowsEdits(t *testing.T) {
	store, err := config.NewStore("localhost")
	if err != nil {
		t.Fatal(err)
	}
	cfg := FromStore(store)
	if diff := cmp.Diff(DefaultConfig(), cfg()); diff != "" {
		t.Errorf("with no ConfigMaps (-want +got):\n%s", diff)
	}
	edits := map[string]map[string]string{
		config.AutoscalerConfigName: {"allow-zero-initial-scale": "true", "max-scale": "10", "max-scale-limit": "20"},
		config.DefaultsConfigName: {"revision-timeout-seconds": "60", "max-revision-timeout-seconds": "90",
			"container-concurrency": "4", "container-concurrency-max-limit": "50"},
		config.FeaturesConfigName: {"kubernetes.podspec-tolerations": "Enabled", "secure-pod-defaults": "Enabled"},
	}
	for name, data := range edits {
		if err := store.Update(name, data); err != nil {
			t.Fatal(err)
		}
	}
	features := config.DefaultFeatures()
	features.PodSpecTolerations, features.SecurePodDefaults = config.FeatureEnabled, config.FeatureEnabled
	want := Config{RevisionTimeoutSeconds: 60, MaxRevisionTimeoutSeconds: 90, ContainerConcurrency: 4,
		ContainerConcurrencyMaxLimit: 50, AllowZeroInitialScale: true, MaxScaleLimit: 20, Features: features}
	if diff := cmp.Diff(want, cfg()); diff != "" {
		t.Errorf("after the edits (-want +got):\n%s", diff)
	}
}
