package gc

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/conflict"
)

// Reconciler collects a Configuration's stale Revisions.
type Reconciler struct {
	client client.Client
	config *config.Store
	now    func() time.Time
}

// SetupWithManager registers the collector, keyed by Configuration: a
// Revision change (a new one, a routing state change) requeues its
// Configuration through the owner reference, and a config-gc edit
// requeues them all.
func SetupWithManager(mgr ctrl.Manager, cfg *config.Store) error {
	r := &Reconciler{client: mgr.GetClient(), config: cfg, now: time.Now}
	return ctrl.NewControllerManagedBy(mgr).
		Named("revision-gc").
		For(&servingv1.Configuration{}).
		Owns(&servingv1.Revision{}).
		WatchesRawSource(source.Channel(cfg.Changes(), handler.EnqueueRequestsFromMapFunc(r.allConfigurations))).
		Complete(conflict.Requeue(r))
}

func (r *Reconciler) allConfigurations(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &servingv1.ConfigurationList{}
	if err := r.client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Configurations after a config-gc change")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, c := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
	}
	return reqs
}

// Reconcile deletes what Collect says and comes back when the next kept
// Revision turns stale.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cfg := &servingv1.Configuration{}
	if err := r.client.Get(ctx, req.NamespacedName, cfg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	revs := &servingv1.RevisionList{}
	if err := r.client.List(ctx, revs, client.InNamespace(cfg.Namespace), client.MatchingLabels{servingv1.ConfigurationLabelKey: cfg.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list Revisions of %s: %w", req.NamespacedName, err)
	}
	deletions, recheck := Collect(cfg, revs.Items, r.config.Load().GC, r.now())
	log := ctrl.LoggerFrom(ctx)
	for _, name := range deletions {
		log.Info("Collecting stale Revision", "revision", name)
		rev := &servingv1.Revision{}
		rev.Namespace, rev.Name = cfg.Namespace, name
		if err := client.IgnoreNotFound(r.client.Delete(ctx, rev)); err != nil {
			return ctrl.Result{}, fmt.Errorf("collect Revision %s/%s: %w", cfg.Namespace, name, err)
		}
	}
	return ctrl.Result{RequeueAfter: recheck}, nil
}
