package build

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The ledger is what knit itself recorded a key to have built: one
// ConfigMap per repository namespace in the build namespace, key → image
// by digest, written only from the push step's result. Neither a
// registry tag (anything with push rights can move it) nor a
// GitRepository's status (whoever can write it) is trusted to say what a
// key built; the ledger lives where no tenant can write.
const (
	ledgerPrefix = "knit-builds-"
	// LedgerLabel marks the ledgers.
	LedgerLabel = "knit.dev/build-ledger"
	// keptDigests bounds a ledger (~200 bytes an entry, far below a
	// ConfigMap's 1 MiB). An entry that falls off costs one rebuild:
	// builds are reproducible.
	keptDigests = 1000
)

// LedgerName is the ledger of a repository namespace's builds.
func LedgerName(namespace string) string { return ledgerPrefix + namespace }

// Ledger reads and writes the ledgers kept in Namespace. Every builder of
// source images (the cluster's Jobs, knit dev's BuildKit) records through
// one, so a key is believed built only where knit wrote it.
type Ledger struct {
	// Client writes (a merge patch or a create); Reader reads, uncached
	// or through a cache that holds Namespace's ConfigMaps.
	Client client.Client
	Reader client.Reader
	// Namespace holds the ledgers: knit's own, where tenants cannot write.
	Namespace string
}

// ledger is b's Ledger, in the build namespace.
func (b *Builder) ledger() Ledger {
	return Ledger{Client: b.client, Reader: b.reader, Namespace: b.cfg.Namespace}
}

// Recorded is the image the ledger of namespace's builds holds for key,
// "" when none.
func (l Ledger) Recorded(ctx context.Context, namespace, key string) (string, error) {
	cm := &corev1.ConfigMap{}
	err := l.Reader.Get(ctx, client.ObjectKey{Namespace: l.Namespace, Name: LedgerName(namespace)}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read the build ledger %s: %w", LedgerName(namespace), err)
	}
	return cm.Data[key], nil
}

// Record adds key → image to the ledger of namespace's builds with a
// merge patch (concurrent records of other keys do not conflict), creating
// it first when missing, and drops the lexically first keys beyond
// keptDigests.
func (l Ledger) Record(ctx context.Context, namespace, key, image string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: LedgerName(namespace)}}
	data := map[string]*string{key: &image}
	if err := l.Reader.Get(ctx, client.ObjectKeyFromObject(cm), cm); err == nil {
		for _, k := range evicted(cm.Data, key) {
			data[k] = nil
		}
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("read the build ledger %s: %w", cm.Name, err)
	}
	patch, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return err
	}
	err = l.Client.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) {
		cm.Labels = map[string]string{LedgerLabel: "true", RepositoryNamespaceLabel: namespace}
		cm.Data = map[string]string{key: image}
		err = l.Client.Create(ctx, cm)
		if apierrors.IsAlreadyExists(err) { // another build's record won the race
			err = l.Client.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch))
		}
	}
	if err != nil {
		return fmt.Errorf("record build %.16s in the ledger %s: %w", key, cm.Name, err)
	}
	return nil
}

// evicted are the keys to drop so that data with key added keeps at most
// keptDigests.
func evicted(data map[string]string, key string) []string {
	keys := make([]string, 0, len(data))
	for k := range data {
		if k != key {
			keys = append(keys, k)
		}
	}
	if len(keys) < keptDigests {
		return nil
	}
	slices.SortFunc(keys, strings.Compare)
	return keys[:len(keys)-keptDigests+1]
}
