package dev

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/controllers/serverlessservice"
	"github.com/knitops/knit/controllers/serverlessservice/resources"
	"github.com/knitops/knit/internal/endpointslices"
	"github.com/knitops/knit/local/runtime"
	"github.com/knitops/knit/platform"
)

// settleWorkers bounds the ServerlessServices reconciled at once.
const settleWorkers = 8

// settleEndpoints makes the endpoints a previous run left in the API true
// again before anything routes by them. That run's replicas are gone
// (they die with knit dev), so their endpoints are deleted, and every
// ServerlessService that mirrored them, or the activator when it moved, is
// reconciled once, by the controller's own code: its public endpoints then
// name the activator, which holds requests until this run's replicas are
// ready. Without it the ingress would send the first requests after a
// restart to ports nobody listens on, and answer 502 once its retries ran
// out. A ServerlessService that cannot be settled is logged and left to
// the controller.
func settleEndpoints(ctx context.Context, c client.Client, activatorMoved bool) error {
	forgotten, err := runtime.ForgetEarlierEndpoints(ctx, c)
	if err != nil {
		return err
	}
	if len(forgotten) == 0 && !activatorMoved {
		return nil
	}
	var all networkingv1alpha1.ServerlessServiceList
	if err := c.List(ctx, &all); err != nil {
		return fmt.Errorf("list ServerlessServices: %w", err)
	}
	stale := map[types.NamespacedName]bool{}
	for _, svc := range forgotten {
		stale[svc] = true
	}
	work := make(chan reconcile.Request)
	// No manager runs yet: the reconciler reads the API server, which
	// finds a Service's slices by label, not by a cache's index.
	r := serverlessservice.NewReconciler(endpointslices.Uncached(c), platform.ActivatorService)
	var wg sync.WaitGroup
	for range settleWorkers {
		wg.Go(func() {
			for req := range work {
				if _, err := r.Reconcile(ctx, req); err != nil {
					slog.Warn("Could not point a revision's endpoints at the activator after a restart; its controller will", "serverlessService", req.String(), "err", err)
				}
			}
		})
	}
	for i := range all.Items {
		sks := &all.Items[i]
		if activatorMoved || stale[types.NamespacedName{Namespace: sks.Namespace, Name: resources.PrivateServiceName(sks)}] {
			work <- reconcile.Request{NamespacedName: client.ObjectKeyFromObject(sks)}
		}
	}
	close(work)
	wg.Wait()
	return ctx.Err()
}
