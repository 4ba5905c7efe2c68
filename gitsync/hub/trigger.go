package hub

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// RequestedAtAnnotation on a GitRepository asks for a sync now, the way
// Flux's reconcile.fluxcd.io/requestedAt does: any change of its value
// wakes the reconciler, wherever it runs, and `kubectl annotate` can do the
// same by hand.
const RequestedAtAnnotation = "knit.dev/requested-at"

// RequestSync sets RequestedAtAnnotation on the GitRepository key to now.
func RequestSync(ctx context.Context, c client.Client, key types.NamespacedName) error {
	repo := &knitv1alpha1.GitRepository{}
	repo.Namespace, repo.Name = key.Namespace, key.Name
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, RequestedAtAnnotation, time.Now().UTC().Format(time.RFC3339Nano))
	if err := c.Patch(ctx, repo, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("request a sync of GitRepository %s: %w", key, err)
	}
	return nil
}
