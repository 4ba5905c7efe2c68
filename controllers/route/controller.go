package route

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/conflict"
)

// Reconciler resolves Routes' traffic and publishes it in status.
type Reconciler struct {
	client client.Client
	config *config.Store
	// urlPort is the ingress port shown in URLs (0 or 80: none).
	urlPort int
}

// SetupWithManager registers the reconciler. Configuration and Revision
// changes requeue every Route in their namespace: a namespace has few
// Routes, and a missed wake-up would leave traffic on an old Revision.
func SetupWithManager(mgr ctrl.Manager, cfg *config.Store, urlPort int) error {
	r := &Reconciler{client: mgr.GetClient(), config: cfg, urlPort: urlPort}
	return ctrl.NewControllerManagedBy(mgr).
		For(&servingv1.Route{}).
		Watches(&servingv1.Configuration{}, handler.EnqueueRequestsFromMapFunc(r.routesInNamespace)).
		Watches(&servingv1.Revision{}, handler.EnqueueRequestsFromMapFunc(r.routesInNamespace)).
		WatchesRawSource(source.Channel(cfg.Changes(), handler.EnqueueRequestsFromMapFunc(r.allRoutes))).
		Complete(conflict.Requeue(r))
}

// allRoutes requeues every Route after a config change (domain, templates).
func (r *Reconciler) allRoutes(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.routes(ctx)
}

func (r *Reconciler) routesInNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.routes(ctx, client.InNamespace(obj.GetNamespace()))
}

func (r *Reconciler) routes(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	routes := &servingv1.RouteList{}
	if err := r.client.List(ctx, routes, opts...); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(routes.Items))
	for _, rt := range routes.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: rt.Namespace, Name: rt.Name}})
	}
	return reqs
}
