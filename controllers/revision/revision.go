package revision

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/api/autoscaling"
	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/controllers/revision/resolve"
	"github.com/knitops/knit/controllers/revision/resources"
	"github.com/knitops/knit/controllers/transition"
)

// readyEvents are the Revision's transitions `kubectl describe` shows:
// Ready (the replicas serve) and failed (the app crashes, its Deployment
// or SKS cannot be created), noted with the condition's reason and message.
var readyEvents = transition.Events{Condition: duckv1.ConditionReady, Action: "Deploy",
	True: "RevisionReady", TrueNote: "the Revision's replicas are ready and reachable", False: "RevisionFailed"}

// Reconcile ensures the Revision's Deployment and PodAutoscaler, then
// reports their state as the Revision's conditions.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rev := &servingv1.Revision{}
	if err := r.client.Get(ctx, req.NamespacedName, rev); err != nil {
		if apierrors.IsNotFound(err) && r.resolver != nil {
			r.resolver.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if rev.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	before := rev.Status.DeepCopy()
	rev.Status.InitializeConditions()

	var err error
	pinned, retry := r.reconcileDigests(rev)
	if pinned {
		err = r.reconcileChildren(ctx, rev)
	}
	rev.Status.ObservedGeneration = rev.Generation
	if !equality.Semantic.DeepEqual(before, &rev.Status) {
		if err := r.client.Status().Update(ctx, rev); err != nil {
			return ctrl.Result{}, fmt.Errorf("update status of Revision %s: %w", req.NamespacedName, err)
		}
		readyEvents.Record(r.events, rev, &before.Status, &rev.Status.Status)
	}
	var notOwned *owned.NotOwnedError
	if errors.As(err, &notOwned) {
		return ctrl.Result{}, nil // waits for the user to resolve the name clash
	}
	return ctrl.Result{RequeueAfter: retry}, err
}

// reconcileChildren ensures the Revision's Deployment and PodAutoscaler
// and marks the Revision with their state and its pods'.
func (r *Reconciler) reconcileChildren(ctx context.Context, rev *servingv1.Revision) error {
	dep, depErr := r.reconcileDeployment(ctx, rev)
	pa, paErr := r.reconcilePodAutoscaler(ctx, rev)
	err := errors.Join(depErr, paErr)
	if reason, message, ok := owned.Failure(err); ok {
		// A Deployment or PodAutoscaler the API server refuses, or whose
		// name is taken: the Revision cannot run, and says why.
		rev.Status.MarkResourcesAvailableFalse(reason, message)
		return err
	}
	if err != nil {
		return err
	}
	pods, err := r.listPods(ctx, rev)
	MarkStatus(&rev.Status, dep, pa, pods)
	markContainerStatuses(rev, pods)
	return err
}

// reconcileDigests pins the Revision's images to the digests their tags
// name now, once, in status.containerStatuses, before it has a
// Deployment (which runs them by digest): true once they are pinned. A
// tag that cannot be resolved fails the Revision as Knative's
// ContainerMissing (the user's to fix, so no reconcile error), tried
// again after retry.
func (r *Reconciler) reconcileDigests(rev *servingv1.Revision) (pinned bool, retry time.Duration) {
	if r.resolver == nil || digestsKnown(rev) {
		return true, 0
	}
	cfg := r.config.Load().Deployment
	// Init containers first, then the rest, split again below.
	all := append(append([]corev1.Container(nil), rev.Spec.InitContainers...), rev.Spec.Containers...)
	statuses, err := r.resolver.Resolve(resolve.Request{
		Revision: client.ObjectKeyFromObject(rev), UID: rev.UID, Containers: all,
		ServiceAccountName: rev.Spec.ServiceAccountName, ImagePullSecrets: rev.Spec.ImagePullSecrets,
		Skip: cfg.SkipsTagResolving, Timeout: cfg.DigestResolutionTimeout,
	})
	if failed := resolve.AsError(err); failed != nil {
		rev.Status.MarkContainerHealthyFalse(servingv1.ReasonContainerMissing, failed.Error())
		return false, failed.RetryAfter
	}
	if statuses == nil {
		return false, 0
	}
	n := len(rev.Spec.InitContainers)
	rev.Status.InitContainerStatuses, rev.Status.ContainerStatuses = nil, statuses[n:]
	if n > 0 {
		rev.Status.InitContainerStatuses = statuses[:n]
	}
	return true, 0
}

func (r *Reconciler) reconcileDeployment(ctx context.Context, rev *servingv1.Revision) (*appsv1.Deployment, error) {
	cfg := r.config.Load()
	want := resources.MakeDeployment(rev, resources.DeploymentConfig{
		QueueImage:              r.queueImage,
		ProgressDeadlineSeconds: int32(cfg.Deployment.ProgressDeadline.Seconds()),
		InitialReplicas:         initialScale(rev),
		QueueEnv:                r.queueEnv,
		MultiContainerProbing:   cfg.Features.MultiContainerProbing == config.FeatureEnabled,
		QueueSidecar:            cfg.Deployment.QueueSidecar,
		QueueResourceDefaults:   cfg.Features.QueueProxyResourceDefaults == config.FeatureEnabled,
		QueuePodInfo:            config.OptedIn(cfg.Features.QueueProxyMountPodInfo, rev.Annotations, config.QueueProxyPodInfoAnnotation),
		AutodetectHTTP2:         cfg.Features.AutoDetectHTTP2 == config.FeatureEnabled,
	})
	return owned.Ensure(ctx, r.client, rev, "Deployment", want, &appsv1.Deployment{},
		func(have, want *appsv1.Deployment) bool {
			return !equality.Semantic.DeepDerivative(want.Spec.Template, have.Spec.Template) ||
				!equality.Semantic.DeepEqual(want.Spec.ProgressDeadlineSeconds, have.Spec.ProgressDeadlineSeconds)
		},
		// Replicas belong to the PodAutoscaler once the Deployment exists.
		func(have, want *appsv1.Deployment) {
			have.Spec.Template, have.Spec.ProgressDeadlineSeconds = want.Spec.Template, want.Spec.ProgressDeadlineSeconds
		})
}

func (r *Reconciler) reconcilePodAutoscaler(ctx context.Context, rev *servingv1.Revision) (*autoscalingv1alpha1.PodAutoscaler, error) {
	return owned.Ensure(ctx, r.client, rev, "PodAutoscaler", resources.MakePodAutoscaler(rev), &autoscalingv1alpha1.PodAutoscaler{},
		func(have, want *autoscalingv1alpha1.PodAutoscaler) bool {
			return !equality.Semantic.DeepEqual(have.Spec, want.Spec) || !equality.Semantic.DeepEqual(have.Annotations, want.Annotations)
		},
		func(have, want *autoscalingv1alpha1.PodAutoscaler) {
			have.Spec, have.Annotations = want.Spec, want.Annotations
		})
}

// initialScale is the replica count a new Revision starts with: Knative's
// initial-scale annotation, else 1.
func initialScale(rev *servingv1.Revision) int32 {
	if n, ok, err := autoscaling.InitialScaleAnnotation.Parse(rev.Annotations); ok && err == nil {
		return n
	}
	return 1
}
