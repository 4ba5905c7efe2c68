package ingress

import (
	"context"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/endpointslices"
)

// tableBuilder rebuilds the router's table from the cache whenever a Route
// or EndpointSlice changes. Every event maps to the same key, so a burst of
// changes costs one rebuild.
type tableBuilder struct {
	client client.Reader
	router *Router
}

var tableKey = reconcile.Request{}

// SetupWithManager feeds the router from the manager's cache; the same
// code serves knit dev and a cluster's ingress Deployment.
func SetupWithManager(mgr ctrl.Manager, router *Router) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{tableKey}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("ingress-table").
		Watches(&servingv1.Route{}, all).
		Watches(&discoveryv1.EndpointSlice{}, all).
		Complete(&tableBuilder{client: mgr.GetClient(), router: router})
}

// Reconcile reads every Route and EndpointSlice straight from the cache,
// without the copies a List makes by default: Build only reads them and
// keeps strings, which the cache never changes in place (it replaces an
// object on update). Copying was 30% of knit's CPU while a thousand
// Services were applied, a full copy of every Route and slice per event.
func (b *tableBuilder) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	routes := &servingv1.RouteList{}
	if err := b.client.List(ctx, routes, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("list Routes: %w", err)
	}
	slices := &discoveryv1.EndpointSliceList{}
	if err := b.client.List(ctx, slices, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("list EndpointSlices: %w", err)
	}
	// Trusted logs the slices Build leaves out, once each.
	b.router.Update(Build(routes.Items, endpointslices.Trusted(ctx, slices.Items)))
	return reconcile.Result{}, nil
}
