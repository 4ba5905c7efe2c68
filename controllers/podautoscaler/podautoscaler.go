package podautoscaler

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/controllers/podautoscaler/resources"
)

// Reconcile asks the recommender for the scale, applies it to the
// Deployment, sets the SKS mode and reports status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pa := &autoscalingv1alpha1.PodAutoscaler{}
	if err := r.client.Get(ctx, req.NamespacedName, pa); err != nil {
		if apierrors.IsNotFound(err) {
			r.recommender.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pa.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	before := pa.Status.DeepCopy()
	pa.Status.InitializeConditions()

	dep := &appsv1.Deployment{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: pa.Namespace, Name: pa.Spec.ScaleTargetRef.Name}, dep); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("get scale target %s: %w", pa.Spec.ScaleTargetRef.Name, err)
		}
		pa.Status.MarkScaleTargetNotInitialized(autoscalingv1alpha1.ReasonScaleTargetMissing,
			fmt.Sprintf("waiting for Deployment %s", pa.Spec.ScaleTargetRef.Name))
		return ctrl.Result{}, r.updateStatus(ctx, pa, before)
	}
	ready := dep.Status.ReadyReplicas
	rec := r.recommender.Recommend(ctx, pa, ready, ptr.Deref(dep.Spec.Replicas, 1))
	if err := r.scale(ctx, dep, rec.DesiredScale); err != nil {
		return ctrl.Result{}, err
	}
	sks, err := owned.Ensure(ctx, r.client, pa, "ServerlessService", resources.MakeSKS(pa, rec.Mode, rec.NumActivators), &networkingv1alpha1.ServerlessService{},
		func(have, want *networkingv1alpha1.ServerlessService) bool {
			return !equality.Semantic.DeepEqual(have.Spec, want.Spec)
		},
		func(have, want *networkingv1alpha1.ServerlessService) { have.Spec = want.Spec })
	if err != nil {
		// An SKS that cannot be written (or whose name is taken) leaves
		// the Revision unreachable: say so, so the Revision says it too.
		reason, message, ok := owned.Failure(err)
		if !ok {
			return ctrl.Result{}, err
		}
		pa.Status.MarkSKSFailed(reason, message)
		statusErr := r.updateStatus(ctx, pa, before)
		var notOwned *owned.NotOwnedError
		if errors.As(err, &notOwned) {
			return ctrl.Result{RequeueAfter: rec.RequeueAfter}, statusErr
		}
		return ctrl.Result{}, errors.Join(err, statusErr)
	}
	MarkStatus(&pa.Status, rec, ready, sks)
	return ctrl.Result{RequeueAfter: rec.RequeueAfter}, r.updateStatus(ctx, pa, before)
}

// scale sets the Deployment's replicas when they differ from desired.
func (r *Reconciler) scale(ctx context.Context, dep *appsv1.Deployment, desired int32) error {
	if ptr.Deref(dep.Spec.Replicas, 1) == desired {
		return nil
	}
	if r.hinter != nil && desired > ptr.Deref(dep.Spec.Replicas, 1) {
		r.hinter.HintScale(dep, desired)
	}
	patch := client.MergeFrom(dep.DeepCopy())
	dep.Spec.Replicas = ptr.To(desired)
	if err := r.client.Patch(ctx, dep, patch); err != nil {
		return fmt.Errorf("scale Deployment %s to %d: %w", dep.Name, desired, err)
	}
	return nil
}

func (r *Reconciler) updateStatus(ctx context.Context, pa *autoscalingv1alpha1.PodAutoscaler, before *autoscalingv1alpha1.PodAutoscalerStatus) error {
	pa.Status.ObservedGeneration = pa.Generation
	if equality.Semantic.DeepEqual(before, &pa.Status) {
		return nil
	}
	if err := r.client.Status().Update(ctx, pa); err != nil {
		return fmt.Errorf("update status of PodAutoscaler %s/%s: %w", pa.Namespace, pa.Name, err)
	}
	return nil
}
