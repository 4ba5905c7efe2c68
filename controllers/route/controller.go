package route

import (
	"context"

	corev1 "k8s.io/api/core/v1"
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
	"github.com/knitops/knit/controllers/route/certificates"
)

// Reconciler resolves Routes' traffic and publishes it in status.
type Reconciler struct {
	client client.Client
	config *config.Store
	// urlPort is the ingress port shown in URLs (0 or 80: none);
	// urlPortTLS likewise for https:// URLs (0 or 443: none).
	urlPort, urlPortTLS int
	// internalIngress is the host placeholder Services point at (the
	// ingress's internal listener); "" makes none.
	internalIngress string
	// certs obtains certificates for external-domain-tls; nil obtains
	// none (tls.go).
	certs *certificates.Provisioner
	// events records the Route turning Ready or failing (readyEvents).
	events events.EventRecorder
	// ingress, when set, says whether the ingress serves a Route as a
	// version of it says (ingress.go); nil takes a Route's resolved
	// traffic as served.
	ingress IngressState
}

// SetupWithManager registers the reconciler. A Configuration or Revision
// change wakes only the Routes that reference it (tracker.go), and only
// when it touches what a Route reads: with every pushed repository in one
// namespace, waking the namespace would make each change cost O(Services).
// A config change (domain, templates) wakes every Route.
func SetupWithManager(mgr ctrl.Manager, cfg *config.Store, opts Options) error {
	r := &Reconciler{client: mgr.GetClient(), config: cfg, urlPort: opts.URLPort, urlPortTLS: opts.URLPortTLS,
		internalIngress: opts.InternalIngress, events: mgr.GetEventRecorder("knit-route"), ingress: opts.Ingress}
	r.certs = certificates.New(mgr.GetClient(), mgr.GetAPIReader(), certificates.Options{
		Ingress: opts.IngressURL, Log: mgr.GetLogger().WithName("certificates")})
	return r.setup(mgr, conflict.Requeue(r))
}

// Options are what differs between knit dev and a cluster.
type Options struct {
	// URLPort is shown in http:// URLs when not 0 or 80 (knit dev's
	// ingress port); URLPortTLS in https:// URLs when not 0 or 443.
	URLPort, URLPortTLS int
	// IngressURL is the ingress's plain-HTTP URL as the controller
	// reaches it, where a challenge response is checked before an ACME
	// CA validates it; "" skips the check.
	IngressURL string
	// InternalIngress is the DNS name of the ingress's internal listener
	// (knit-ingress-internal.knit-system.svc.cluster.local on a cluster),
	// which every Route's placeholder Services point at; "" makes none.
	InternalIngress string
	// Ingress is the ingress in this process (knit dev's), which the
	// Route's IngressReady waits for; nil on a cluster.
	Ingress IngressState
}

// setup wires r's indexes and watches to rec, which is r itself wrapped
// (tests count its calls).
func (r *Reconciler) setup(mgr ctrl.Manager, rec reconcile.Reconciler) error {
	if err := addIndexes(context.Background(), mgr); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&servingv1.Route{}).
		Owns(&corev1.Service{}).
		Watches(&servingv1.Configuration{}, handler.EnqueueRequestsFromMapFunc(r.routesForConfiguration), builder.WithPredicates(configurationChanged)).
		Watches(&servingv1.Revision{}, handler.EnqueueRequestsFromMapFunc(r.routesForRevision), builder.WithPredicates(revisionChanged)).
		WatchesRawSource(source.Channel(r.config.Changes(), handler.EnqueueRequestsFromMapFunc(r.allRoutes)))
	if r.certs != nil {
		b = b.WatchesRawSource(source.Channel(r.certs.Wake(), &handler.EnqueueRequestForObject{}))
	}
	return b.Complete(rec)
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
