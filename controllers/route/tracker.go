package route

import (
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/route/resources"
)

// The cache's indexes that play the part of Knative's tracker: from a
// Configuration or Revision to the Routes that read it, so that a change
// wakes those Routes and no others, and a Route reads only what it
// references, however many Services share its namespace.
const (
	// configurationIndex indexes Routes by the Configurations whose latest
	// ready Revision their spec.traffic follows.
	configurationIndex = "spec.traffic.configurationName"
	// revisionIndex indexes Routes by the Revisions their spec.traffic
	// names.
	revisionIndex = "spec.traffic.revisionName"
	// routeLabelIndex indexes Revisions by their serving.knative.dev/route
	// label: the Route that last marked them active, which marks them
	// reserve once it stops sending them traffic.
	routeLabelIndex = "metadata.labels." + servingv1.RouteLabelKey
)

// addIndexes registers the indexes with mgr's cache.
func addIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	for _, add := range []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&servingv1.Route{}, configurationIndex, referencedConfigurations},
		{&servingv1.Route{}, revisionIndex, referencedRevisions},
		{&servingv1.Revision{}, routeLabelIndex, labelledRoute},
	} {
		if err := idx.IndexField(ctx, add.obj, add.field, add.fn); err != nil {
			return err
		}
	}
	return nil
}

func referencedConfigurations(obj client.Object) []string {
	cfgs, _ := resources.References(obj.(*servingv1.Route).Spec.Traffic)
	return cfgs
}

func referencedRevisions(obj client.Object) []string {
	_, revs := resources.References(obj.(*servingv1.Route).Spec.Traffic)
	return revs
}

func labelledRoute(obj client.Object) []string {
	if rt := obj.GetLabels()[servingv1.RouteLabelKey]; rt != "" {
		return []string{rt}
	}
	return nil
}

// routesForConfiguration wakes the Routes following cfg.
func (r *Reconciler) routesForConfiguration(ctx context.Context, cfg client.Object) []reconcile.Request {
	return r.routesFor(ctx, cfg.GetNamespace(), nil, map[string]string{configurationIndex: cfg.GetName()})
}

// routesForRevision wakes the Routes naming rev, those following its
// Configuration (it may be, or be about to become, their latest ready
// Revision) and the Route that labelled it.
func (r *Reconciler) routesForRevision(ctx context.Context, rev client.Object) []reconcile.Request {
	lookups := map[string]string{revisionIndex: rev.GetName()}
	if cfg := rev.GetLabels()[servingv1.ConfigurationLabelKey]; cfg != "" {
		lookups[configurationIndex] = cfg
	}
	return r.routesFor(ctx, rev.GetNamespace(), labelledRoute(rev), lookups)
}

// routesFor returns requests for the named Routes of ns and for those an
// index lookup (index → value) finds there, sorted and without repeats.
func (r *Reconciler) routesFor(ctx context.Context, ns string, names []string, lookups map[string]string) []reconcile.Request {
	for _, index := range slices.Sorted(maps.Keys(lookups)) {
		routes := &servingv1.RouteList{}
		if err := r.client.List(ctx, routes, client.InNamespace(ns), client.MatchingFields{index: lookups[index]}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing Routes to wake; they catch up at their next change", "index", index, "value", lookups[index])
			continue
		}
		for _, rt := range routes.Items {
			names = append(names, rt.Name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	reqs := make([]reconcile.Request, len(names))
	for i, name := range names {
		reqs[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
	}
	return reqs
}

// revisionChanged drops Revision updates no Route output depends on: a
// Route reads a Revision's Ready condition (is it ready, why did it fail)
// and its labels (its Configuration; the routing state and Route labels
// the Route writes). Status churn from the runtime (replica counts, other
// conditions) passes no further.
var revisionChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, okOld := e.ObjectOld.(*servingv1.Revision)
	rev, okNew := e.ObjectNew.(*servingv1.Revision)
	if !okOld || !okNew {
		return true
	}
	return !sameReady(&old.Status.Status, &rev.Status.Status) || !maps.Equal(old.Labels, rev.Labels)
}}

// configurationChanged drops Configuration updates no Route output
// depends on: a Route reads a Configuration's latest ready Revision and,
// while it has none, its Ready condition, and keeps its latest created
// Revision active. A new spec or an observed generation alone change none
// of them.
var configurationChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, okOld := e.ObjectOld.(*servingv1.Configuration)
	cfg, okNew := e.ObjectNew.(*servingv1.Configuration)
	if !okOld || !okNew {
		return true
	}
	return old.Status.LatestReadyRevisionName != cfg.Status.LatestReadyRevisionName ||
		old.Status.LatestCreatedRevisionName != cfg.Status.LatestCreatedRevisionName ||
		!sameReady(&old.Status.Status, &cfg.Status.Status)
}}

// sameReady compares the parts of two Ready conditions a Route shows.
func sameReady(a, b *duckv1.Status) bool {
	ca, cb := a.GetCondition(duckv1.ConditionReady), b.GetCondition(duckv1.ConditionReady)
	if ca == nil || cb == nil {
		return ca == cb
	}
	return ca.Status == cb.Status && ca.Reason == cb.Reason && ca.Message == cb.Message
}
