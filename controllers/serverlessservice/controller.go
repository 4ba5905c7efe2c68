package serverlessservice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/internal/endpointslices"
)

// Activator is where the activators' endpoints are published: the
// EndpointSlices of this Service.
type Activator struct {
	Namespace, Service string
}

// Reconciler keeps each SKS's Services and public endpoints.
type Reconciler struct {
	client    client.Client
	activator Activator
}

// NewReconciler is the reconciler without a manager, for a caller that
// must settle ServerlessServices before any manager runs: knit dev at
// startup, whose previous run's replicas are gone, points their public
// endpoints at the activator before its ingress serves. c finds slices
// through endpointslices.List: a direct client must be wrapped in
// endpointslices.Uncached.
func NewReconciler(c client.Client, activator Activator) *Reconciler {
	return &Reconciler{client: c, activator: activator}
}

// SetupWithManager registers the reconciler. A private slice change wakes
// its SKS; an activator slice change wakes every SKS, since any of them may
// be in Proxy mode.
func SetupWithManager(mgr ctrl.Manager, activator Activator) error {
	if err := endpointslices.Index(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	r := NewReconciler(mgr.GetClient(), activator)
	return ctrl.NewControllerManagedBy(mgr).
		For(&networkingv1alpha1.ServerlessService{}).
		Owns(&corev1.Service{}).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(r.sksForSlice)).
		Complete(conflict.Requeue(r))
}

func (r *Reconciler) sksForSlice(ctx context.Context, obj client.Object) []reconcile.Request {
	svc := obj.GetLabels()[discoveryv1.LabelServiceName]
	if obj.GetNamespace() == r.activator.Namespace && svc == r.activator.Service {
		all := &networkingv1alpha1.ServerlessServiceList{}
		if err := r.client.List(ctx, all); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(all.Items))
		for _, s := range all.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
		}
		return reqs
	}
	return privateSliceOwner(obj)
}

// privateSliceOwner maps a private Service's slice to its SKS by the
// labels the slice inherits from the Service (as Knative's SKS controller
// does): the Service's name may be shortened and cannot be parsed back.
func privateSliceOwner(obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	name := l[networkingv1alpha1.ServerlessServiceLabelKey]
	if name == "" || l[networkingv1alpha1.ServiceTypeLabelKey] != networkingv1alpha1.ServiceTypePrivate {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}
