package domainmapping

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/controllers/route/certificates"
	"github.com/knitops/knit/controllers/transition"
)

// Reconciler keeps DomainMappings' claims, certificates and status.
type Reconciler struct {
	client client.Client
	// reader reads Secrets uncached: spec.tls's, one by one, and
	// knit-system's certificates.
	reader client.Reader
	config *config.Store
	// urlPort is the ingress port shown in http:// URLs (0 or 80: none);
	// urlPortTLS likewise for https:// URLs (0 or 443: none).
	urlPort, urlPortTLS int
	// certs obtains certificates for external-domain-tls; nil obtains
	// none.
	certs  *certificates.Provisioner
	events events.EventRecorder
}

// Options are what differs between knit dev and a cluster.
type Options struct {
	// URLPort is shown in http:// URLs when not 0 or 80 (knit dev's
	// ingress port); URLPortTLS in https:// URLs when not 0 or 443.
	URLPort, URLPortTLS int
	// IngressURL is the ingress's plain-HTTP URL as the controller
	// reaches it, where a challenge response is checked before the ACME
	// CA validates it; "" skips the check.
	IngressURL string
}

// readyEvents are the transitions `kubectl describe` shows.
var readyEvents = transition.Events{Condition: duckv1.ConditionReady, Action: "Map",
	True: "DomainMappingReady", TrueNote: "the domain is claimed and served", False: "DomainMappingFailed"}

// refIndex indexes DomainMappings by the name spec.ref points at, so a
// Service or Route waking up wakes only the mappings of it.
const refIndex = "spec.ref.name"

// SetupWithManager registers the reconciler. A claim wakes the mappings
// of its domain in every namespace (the one waiting for it to go away
// among them); a Service, Route or placeholder Service wakes the
// mappings referring to its name; a config change wakes them all.
func SetupWithManager(mgr ctrl.Manager, cfg *config.Store, opts Options) error {
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), config: cfg, urlPort: opts.URLPort, urlPortTLS: opts.URLPortTLS,
		events: mgr.GetEventRecorder("knit-domainmapping")}
	r.certs = certificates.New(mgr.GetClient(), mgr.GetAPIReader(), certificates.Options{
		Kind: certificateKind, Ingress: opts.IngressURL, Log: mgr.GetLogger().WithName("domainmapping-certificates"),
		Object: func(namespace, name string) client.Object {
			return &servingv1beta1.DomainMapping{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		}})
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &servingv1beta1.DomainMapping{}, refIndex,
		func(o client.Object) []string { return []string{o.(*servingv1beta1.DomainMapping).Spec.Ref.Name} }); err != nil {
		return err
	}
	byRef := handler.EnqueueRequestsFromMapFunc(r.mappingsOf)
	return ctrl.NewControllerManagedBy(mgr).
		For(&servingv1beta1.DomainMapping{}).
		Watches(&netv1alpha1.ClusterDomainClaim{}, handler.EnqueueRequestsFromMapFunc(r.mappingsOfDomain)).
		Watches(&servingv1.Service{}, byRef).
		Watches(&servingv1.Route{}, byRef).
		Watches(&corev1.Service{}, byRef).
		WatchesRawSource(source.Channel(r.config.Changes(), handler.EnqueueRequestsFromMapFunc(r.all))).
		WatchesRawSource(source.Channel(r.certs.Wake(), &handler.EnqueueRequestForObject{})).
		Complete(conflict.Requeue(r))
}

// mappingsOf are the DomainMappings of o's namespace whose ref names o.
func (r *Reconciler) mappingsOf(ctx context.Context, o client.Object) []reconcile.Request {
	return r.list(ctx, client.InNamespace(o.GetNamespace()), client.MatchingFields{refIndex: o.GetName()})
}

// mappingsOfDomain are the DomainMappings, in any namespace, of the
// domain a ClusterDomainClaim is named after.
func (r *Reconciler) mappingsOfDomain(ctx context.Context, o client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, req := range r.list(ctx) {
		if req.Name == o.GetName() {
			out = append(out, req)
		}
	}
	return out
}

func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.list(ctx)
}

func (r *Reconciler) list(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	dms := &servingv1beta1.DomainMappingList{}
	if err := r.client.List(ctx, dms, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing DomainMappings")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(dms.Items))
	for _, dm := range dms.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: dm.Namespace, Name: dm.Name}})
	}
	return reqs
}
