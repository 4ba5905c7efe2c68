package route

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
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
	// events records the Route turning Ready or failing (readyEvents).
	events events.EventRecorder
}

// SetupWithManager registers the reconciler. A Configuration or Revision
// change wakes only the Routes that reference it (tracker.go), and only
// when it touches what a Route reads: with every pushed repository in one
// namespace, waking the namespace would make each change cost O(Services).
// A config change (domain, templates) wakes every Route.
func SetupWithManager(mgr ctrl.Manager, cfg *config.Store, urlPort int) error {
	r := &Reconciler{client: mgr.GetClient(), config: cfg, urlPort: urlPort, events: mgr.GetEventRecorder("knit-route")}
	return r.setup(mgr, conflict.Requeue(r))
}

// setup wires r's indexes and watches to rec, which is r itself wrapped
// (tests count its calls).
func (r *Reconciler) setup(mgr ctrl.Manager, rec reconcile.Reconciler) error {
	if err := addIndexes(context.Background(), mgr); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&servingv1.Route{}).
		Watches(&servingv1.Configuration{}, handler.EnqueueRequestsFromMapFunc(r.routesForConfiguration), builder.WithPredicates(configurationChanged)).
		Watches(&servingv1.Revision{}, handler.EnqueueRequestsFromMapFunc(r.routesForRevision), builder.WithPredicates(revisionChanged)).
		WatchesRawSource(source.Channel(r.config.Changes(), handler.EnqueueRequestsFromMapFunc(r.allRoutes))).
		Complete(rec)
}

// allRoutes requeues every Route after a config change (domain, templates).
func (r *Reconciler) allRoutes(ctx context.Context, _ client.Object) []reconcile.Request {
	routes := &servingv1.RouteList{}
	if err := r.client.List(ctx, routes); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Routes to apply a config change")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(routes.Items))
	for _, rt := range routes.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: rt.Namespace, Name: rt.Name}})
	}
	return reqs
}
