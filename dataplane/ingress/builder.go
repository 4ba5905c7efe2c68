package ingress

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/internal/endpointslices"
)

// tableBuilder rebuilds the router's table from the cache whenever a Route,
// a DomainMapping, an EndpointSlice or config-features changes. Every event maps to the
// same key, so a burst of changes costs one rebuild, and the workqueue
// never hands one key to two workers at once: the fields below are the
// one running Reconcile's.
type tableBuilder struct {
	client client.Reader
	// edge reads config-network and the certificate Secrets (edge.go).
	edge   client.Reader
	router *Router

	// opts are the Options of config-features at featuresVersion, its
	// resourceVersion ("" while it does not exist). The ConfigMap is
	// parsed once per version: a version the parser refuses is logged
	// once and leaves opts as they were, whatever rebuilds follow.
	opts            Options
	featuresVersion string
	// networkVersion is config-network's resourceVersion behind
	// opts.Network, likewise.
	networkVersion string
	// certs are the parsed certificate Secrets (edge.go).
	certs certCache
}

var tableKey = reconcile.Request{}

// featuresKey is the one ConfigMap the ingress reads.
var featuresKey = types.NamespacedName{Namespace: config.SystemNamespace, Name: config.FeaturesConfigName}

// SetupWithManager feeds the router from the manager's cache; the same
// code serves knit dev and a cluster's ingress Deployment. A cluster's
// ingress narrows its cache of ConfigMaps with RestrictCache.
func SetupWithManager(mgr ctrl.Manager, router *Router) error {
	edge, err := newEdgeCache(mgr)
	if err != nil {
		return err
	}
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{tableKey}
	})
	features := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == featuresKey.Namespace && o.GetName() == featuresKey.Name
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("ingress-table").
		Watches(&servingv1.Route{}, all).
		Watches(&servingv1beta1.DomainMapping{}, all).
		Watches(&discoveryv1.EndpointSlice{}, all).
		Watches(&corev1.ConfigMap{}, all, builder.WithPredicates(features)).
		WatchesRawSource(source.Kind(edge, &corev1.ConfigMap{}, handler.TypedEnqueueRequestsFromMapFunc(allOf[*corev1.ConfigMap]))).
		WatchesRawSource(source.Kind(edge, &corev1.Secret{}, handler.TypedEnqueueRequestsFromMapFunc(allOf[*corev1.Secret]))).
		Complete(&tableBuilder{client: mgr.GetClient(), edge: edge, router: router})
}

// RestrictCache narrows a cache's ConfigMaps to config-features in
// knit-system, replacing whatever o said of ConfigMaps (two entries for
// one kind would leave the cache to pick either). The ingress faces the
// Internet and needs no other ConfigMap: its Role grants this one alone
// (charts/knit/templates/ingress/rbac.yaml), and the API server checks a
// list or watch against a rule's resourceNames only when it selects
// metadata.name, as the cache then does.
func RestrictCache(o *cache.Options) {
	byObject := make(map[client.Object]cache.ByObject, len(o.ByObject)+1)
	for obj, by := range o.ByObject {
		if _, ok := obj.(*corev1.ConfigMap); !ok {
			byObject[obj] = by
		}
	}
	byObject[&corev1.ConfigMap{}] = cache.ByObject{Namespaces: map[string]cache.Config{
		featuresKey.Namespace: {FieldSelector: fields.OneTermEqualSelector("metadata.name", featuresKey.Name)},
	}}
	o.ByObject = byObject
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
	dms := &servingv1beta1.DomainMappingList{}
	if err := b.client.List(ctx, dms, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("list DomainMappings: %w", err)
	}
	slices := &discoveryv1.EndpointSliceList{}
	if err := b.client.List(ctx, slices, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("list EndpointSlices: %w", err)
	}
	// A failed read of config-features, config-network or the
	// certificates still rebuilds, with what was read before: a Route's
	// change must not wait on them. The error retries.
	err := errors.Join(b.readFeatures(ctx), b.readNetwork(ctx), b.certs.read(ctx, b.edge))
	// Trusted logs the slices Build leaves out, once each.
	t := b.opts.Build(routes.Items, endpointslices.Trusted(ctx, slices.Items))
	t.mapDomains(b.opts, dms.Items)
	t.certs, t.challenges = b.certs.index, b.certs.challenges
	b.router.Update(t)
	return reconcile.Result{}, err
}

// readFeatures brings b.opts up to date with config-features; a missing
// ConfigMap is Knative's defaults.
func (b *tableBuilder) readFeatures(ctx context.Context) error {
	cm := &corev1.ConfigMap{}
	// Uncopied, as above: ParseFeatures only reads the data.
	err := b.client.Get(ctx, featuresKey, cm, client.UnsafeDisableDeepCopy)
	switch {
	case apierrors.IsNotFound(err):
		b.opts, b.featuresVersion = Options{Network: b.opts.Network}, ""
		return nil
	case err != nil:
		return fmt.Errorf("get ConfigMap %s: %w", featuresKey, err)
	case cm.ResourceVersion == b.featuresVersion:
		return nil
	}
	b.featuresVersion = cm.ResourceVersion
	f, err := config.ParseFeatures(cm.Data)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Ignoring invalid ConfigMap; the ingress keeps its previous features",
			"configmap", featuresKey, "resourceVersion", cm.ResourceVersion, "tagHeaderRouting", b.opts.TagHeaderRouting)
		return nil
	}
	network := b.opts.Network
	b.opts = OptionsFrom(f)
	b.opts.Network = network
	return nil
}
