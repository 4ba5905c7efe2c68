package runtime

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deploymentReconciler makes a revision Deployment's replicas run as
// processes and writes the Deployment's status from them.
type deploymentReconciler struct{ rt *Runtime }

// Reconcile starts and stops replicas towards spec.replicas of the current
// template, enqueues the Services that select them for EndpointSlices, and
// writes status: replica counts and the Available, Progressing and
// ReplicaFailure conditions.
func (r *deploymentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var d appsv1.Deployment
	err := r.rt.client.Get(ctx, req.NamespacedName, &d)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	if err != nil || !managed(&d) || d.DeletionTimestamp != nil {
		r.rt.enqueueServices(ctx, req.Namespace, r.rt.forget(req.NamespacedName))
		return ctrl.Result{}, nil
	}

	s, err := r.rt.sync(&d)
	if err != nil {
		if err == errShutdown {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	r.rt.enqueueServices(ctx, req.Namespace, s.views)

	status, wake := makeStatus(&d, s.views, s.hash, s.progressSince, s.refusal, time.Now())
	wake = earliest(wake, s.retryIn)
	if !equality.Semantic.DeepEqual(d.Status, status) {
		patch := client.MergeFrom(d.DeepCopy())
		d.Status = status
		if err := r.rt.client.Status().Patch(ctx, &d, patch, fieldOwner); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	return ctrl.Result{RequeueAfter: wake}, nil
}

// enqueueServices asks for the EndpointSlices of every Service in the
// namespace that selects one of these replicas.
func (rt *Runtime) enqueueServices(ctx context.Context, namespace string, replicas []replicaView) {
	if len(replicas) == 0 {
		return
	}
	var services corev1.ServiceList
	if err := rt.client.List(ctx, &services, client.InNamespace(namespace)); err != nil {
		rt.log.Error(err, "Listing Services to update EndpointSlices", "namespace", namespace)
		return
	}
	for i := range services.Items {
		svc := &services.Items[i]
		for _, rv := range replicas {
			if selects(svc, rv.Labels) {
				rt.queues.add(&rt.queues.endpointsFor, client.ObjectKeyFromObject(svc))
				break
			}
		}
	}
}

// selects reports whether a Service's selector picks pods with these
// labels; a Service without a selector picks none (its endpoints are
// someone else's to manage).
func selects(svc *corev1.Service, podLabels map[string]string) bool {
	if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return false
	}
	return labels.SelectorFromValidatedSet(svc.Spec.Selector).Matches(labels.Set(podLabels))
}
