package endpoints

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/controllers/endpoints/resources"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/internal/endpointslices"
)

// Alias makes Service Name answer for Service Source, both in Namespace:
// knit's activators are knit-activator, Knative's tools look for
// activator-service. A Source with a selector is left alone: Kubernetes
// fills any Service with that selector, so the alias is a second Service
// with the same selector, which the Helm chart installs. A selectorless
// Source (knit dev's, whose slice knit dev writes itself) gets a
// selectorless alias owned by it, with a copy of each of its slices; the
// Endpoints mirror then gives the alias Endpoints like any Service served
// by knit's slices.
type Alias struct {
	Namespace, Source, Name string
}

func (a Alias) setup(mgr ctrl.Manager) error {
	r := &aliasReconciler{client: mgr.GetClient(), alias: a}
	wake := handler.EnqueueRequestsFromMapFunc(r.wake)
	return ctrl.NewControllerManagedBy(mgr).Named("endpoints-alias").
		Watches(&corev1.Service{}, wake).
		Watches(&discoveryv1.EndpointSlice{}, wake).
		Complete(conflict.Requeue(r))
}

type aliasReconciler struct {
	client client.Client
	alias  Alias
}

// wake maps the source, the alias and their slices to the alias.
func (r *aliasReconciler) wake(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetName()
	if _, ok := obj.(*discoveryv1.EndpointSlice); ok {
		name = obj.GetLabels()[discoveryv1.LabelServiceName]
	}
	if obj.GetNamespace() != r.alias.Namespace || (name != r.alias.Source && name != r.alias.Name) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.alias.Namespace, Name: r.alias.Name}}}
}

// Reconcile reads the source Service, keeps the alias Service, then
// makes the alias's slices copies of the source's trusted ones.
func (r *aliasReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	a := r.alias
	source := &corev1.Service{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: a.Namespace, Name: a.Source}, source); err != nil {
		// Without its source the alias, owned by it, is the garbage
		// collector's.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if source.Spec.Selector != nil || source.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	alias, err := owned.Ensure(ctx, r.client, source, "Service", resources.MakeAlias(source, a.Name), &corev1.Service{},
		resources.AliasDiffers, resources.UpdateAlias)
	var notOwned *owned.NotOwnedError
	if errors.As(err, &notOwned) {
		log.FromContext(ctx).Info("Leaving a Service another owner made under the alias's name", "service", a.Namespace+"/"+a.Name)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("alias Service %s/%s: %w", a.Namespace, a.Name, err)
	}
	sources, err := endpointslices.List(ctx, r.client, types.NamespacedName{Namespace: a.Namespace, Name: a.Source})
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.syncSlices(ctx, alias, resources.AliasSlices(alias, endpointslices.Trusted(ctx, sources)))
}

// syncSlices makes the alias's slices written by this package exactly want.
func (r *aliasReconciler) syncSlices(ctx context.Context, alias *corev1.Service, want []discoveryv1.EndpointSlice) error {
	have, err := endpointslices.List(ctx, r.client, types.NamespacedName{Namespace: alias.Namespace, Name: alias.Name})
	if err != nil {
		return err
	}
	stored := map[string]*discoveryv1.EndpointSlice{}
	for i := range have {
		if have[i].Labels[discoveryv1.LabelManagedBy] == resources.ManagedBy {
			stored[have[i].Name] = &have[i]
		}
	}
	for i := range want {
		if err := r.ensureSlice(ctx, &want[i], stored[want[i].Name]); err != nil {
			return err
		}
		delete(stored, want[i].Name)
	}
	for _, s := range stored {
		if err := client.IgnoreNotFound(r.client.Delete(ctx, s)); err != nil {
			return fmt.Errorf("delete EndpointSlice %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}

// ensureSlice creates want, or updates have to it. A slice's address type
// cannot change: one whose type differs is deleted and made again.
func (r *aliasReconciler) ensureSlice(ctx context.Context, want, have *discoveryv1.EndpointSlice) error {
	if have != nil && have.AddressType != want.AddressType {
		if err := client.IgnoreNotFound(r.client.Delete(ctx, have)); err != nil {
			return fmt.Errorf("delete EndpointSlice %s/%s to change its address type: %w", have.Namespace, have.Name, err)
		}
		have = nil
	}
	if have == nil {
		if err := r.client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create EndpointSlice %s/%s: %w", want.Namespace, want.Name, err)
		}
		return nil
	}
	if !resources.SliceDiffers(have, want) {
		return nil
	}
	have.Labels, have.OwnerReferences, have.Endpoints, have.Ports = want.Labels, want.OwnerReferences, want.Endpoints, want.Ports
	if err := r.client.Update(ctx, have); err != nil {
		return fmt.Errorf("update EndpointSlice %s/%s: %w", have.Namespace, have.Name, err)
	}
	return nil
}
