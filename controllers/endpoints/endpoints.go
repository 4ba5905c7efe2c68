package endpoints

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/knitops/knit/controllers/endpoints/resources"
	"github.com/knitops/knit/internal/endpointslices"
)

// Reconcile reads a Service and its slices, decides whose its Endpoints
// are, and writes knit's when they differ from what the slices say.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	svc := &corev1.Service{}
	if err := r.client.Get(ctx, req.NamespacedName, svc); err != nil {
		// A deleted Service's Endpoints are the garbage collector's: the
		// Service owns them.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if svc.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	// Read only, here and in resources: the cache's own copies.
	slices, err := endpointslices.List(ctx, r.client, req.NamespacedName, client.UnsafeDisableDeepCopy)
	if err != nil {
		return ctrl.Result{}, err
	}
	decision := resources.Decide(svc, slices)
	if decision == resources.Leave {
		return ctrl.Result{}, nil
	}
	want := resources.MakeEndpoints(svc, resources.Subsets(slices))
	return ctrl.Result{}, r.write(ctx, want, decision == resources.Mirror)
}

// write makes the stored Endpoints want: created when missing and create
// allows it, updated when knit wrote it and it differs, else left alone.
func (r *Reconciler) write(ctx context.Context, want *corev1.Endpoints, create bool) error {
	logger := log.FromContext(ctx).WithValues("endpoints", want.Namespace+"/"+want.Name)
	have := &corev1.Endpoints{}
	err := r.endpoints.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		if !create {
			return nil
		}
		if err := r.endpoints.Create(ctx, want); err != nil {
			return fmt.Errorf("create Endpoints %s/%s: %w", want.Namespace, want.Name, err)
		}
		logger.V(1).Info("Created Endpoints", "subsets", len(want.Subsets))
		return nil
	case err != nil:
		return fmt.Errorf("get Endpoints %s/%s: %w", want.Namespace, want.Name, err)
	}
	if !resources.Ours(have) {
		logger.V(1).Info("Leaving Endpoints another writer keeps", "managedBy", have.Labels[resources.LabelManagedBy])
		return nil
	}
	if !resources.Differs(have, want) {
		return nil
	}
	resources.Update(have, want)
	if err := r.endpoints.Update(ctx, have); err != nil {
		return fmt.Errorf("update Endpoints %s/%s: %w", want.Namespace, want.Name, err)
	}
	logger.V(1).Info("Updated Endpoints", "subsets", len(want.Subsets))
	return nil
}
