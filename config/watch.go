package config

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// watcher feeds the Store from the ConfigMaps in the system namespace.
type watcher struct {
	client client.Reader
	store  *Store
}

var watched = map[string]bool{
	DomainConfigName: true, NetworkConfigName: true, GCConfigName: true,
	DeploymentConfigName: true, DefaultsConfigName: true, AutoscalerConfigName: true,
	FeaturesConfigName: true,
}

// ConfigMapNames are the ConfigMaps knit reads in the system namespace,
// Knative's names, sorted.
func ConfigMapNames() []string {
	return slices.Sorted(maps.Keys(watched))
}

// SetupWithManager keeps store in step with knit's ConfigMaps, so an edit
// takes effect without a restart. A bad edit is logged and ignored. It
// runs on every replica, leader or not: admission webhooks answer on all
// of them and read the store too.
func (s *Store) SetupWithManager(mgr ctrl.Manager) error {
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == SystemNamespace && watched[o.GetName()]
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("config").
		For(&corev1.ConfigMap{}, builder.WithPredicates(ours)).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		Complete(&watcher{client: mgr.GetClient(), store: s})
}

func (w *watcher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cm := &corev1.ConfigMap{}
	err := w.client.Get(ctx, req.NamespacedName, cm)
	var data map[string]string
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return reconcile.Result{}, err
	default:
		data = cm.Data
		if data == nil {
			data = map[string]string{}
		}
	}
	if err := w.store.Update(req.Name, data); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Ignoring invalid ConfigMap; the previous settings stay in force", "configmap", req.NamespacedName)
	}
	return reconcile.Result{}, nil
}
