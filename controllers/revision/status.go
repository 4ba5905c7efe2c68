package revision

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// MarkStatus derives the Revision's conditions and replica counts from its
// Deployment, PodAutoscaler and pods. Pure, so every mapping is
// table-tested.
// Once a Revision has been healthy, scaling to zero keeps it Ready: only
// Active turns False; once its containers failed, scaling to zero keeps
// it failed. A PodAutoscaler whose SKS failed (its Services
// cannot be created) makes the Revision's resources unavailable: replicas
// may run, but no request can reach them. Pods whose kubelet reports a
// failure while no replica is ready (markPodFailure: an image that cannot
// be pulled, a container that keeps exiting) fail the Revision on a
// cluster, as the local runtime's ReplicaFailure does under knit dev; a
// ReplicaFailure, where there is one, is reported rather than the pods.
func MarkStatus(s *servingv1.RevisionStatus, dep *appsv1.Deployment, pa *autoscalingv1alpha1.PodAutoscaler, pods []corev1.Pod) {
	prevHealthy := s.GetCondition(servingv1.RevisionConditionContainerHealthy).DeepCopy()
	ready := dep.Status.ReadyReplicas
	wanted := ptr.Deref(dep.Spec.Replicas, 1)
	s.ActualReplicas = &ready
	s.DesiredReplicas = pa.Status.DesiredScale

	failure := depCondition(dep, appsv1.DeploymentReplicaFailure)
	progressing := depCondition(dep, appsv1.DeploymentProgressing)
	switch {
	case failure != nil && failure.Status == corev1.ConditionTrue && failure.Reason == reasonFailedCreate:
		// Its pods are refused (a ResourceQuota, LimitRange or PodSecurity
		// admission): the Revision's resources are not available, as
		// Knative reads a Deployment's ReplicaFailure.
		s.MarkResourcesAvailableFalse(failure.Reason, failure.Message)
	case failure != nil && failure.Status == corev1.ConditionTrue:
		s.MarkContainerHealthyFalse(failure.Reason, failure.Message)
		if progressing != nil && progressing.Status == corev1.ConditionFalse {
			s.MarkResourcesAvailableFalse(progressing.Reason, progressing.Message)
		}
	case progressing != nil && progressing.Status == corev1.ConditionFalse:
		s.MarkResourcesAvailableFalse(progressing.Reason, progressing.Message)
	case ready > 0 || pa.Status.GetCondition(autoscalingv1alpha1.PodAutoscalerConditionScaleTargetInitialized).IsTrue():
		// Its initial scale was ready (none at initial-scale 0, as
		// Knative's PropagateAutoscalerStatus takes it).
		s.MarkResourcesAvailableTrue()
		s.MarkContainerHealthyTrue()
	case s.GetCondition(servingv1.RevisionConditionContainerHealthy).IsTrue():
		// Scaled to zero after being healthy: nothing to re-prove, and
		// whatever failed since (the SKS below) is marked afresh.
		s.MarkResourcesAvailableTrue()
	case wanted == 0 && prevHealthy.IsFalse():
		// Scaled to zero after failing (its replicas never turned ready):
		// none runs to prove otherwise, so the failure stands, as Knative
		// keeps it, rather than the Revision waiting for no replica.
	default:
		s.MarkDeploying(fmt.Sprintf("waiting for %d replica(s) of %s to become ready", wanted, dep.Name))
	}
	if failure == nil || failure.Status != corev1.ConditionTrue {
		// The local runtime says on the Deployment why its replicas fail,
		// in its own words; pods speak where nothing else does.
		markPodFailure(s, prevHealthy, wanted, ready, pods)
	}
	if sks := pa.Status.GetCondition(autoscalingv1alpha1.PodAutoscalerConditionSKSReady); sks.IsFalse() {
		s.MarkResourcesAvailableFalse(sks.Reason, sks.Message)
	}
	markActive(s, pa)
}

func markActive(s *servingv1.RevisionStatus, pa *autoscalingv1alpha1.PodAutoscaler) {
	active := pa.Status.GetCondition(autoscalingv1alpha1.PodAutoscalerConditionActive)
	switch {
	case active.IsTrue():
		s.MarkActiveTrue()
	case active.IsFalse():
		s.MarkActiveFalse(active.Reason, active.Message)
	case active != nil:
		s.MarkActiveUnknown(active.Reason, active.Message)
	default:
		s.MarkActiveUnknown(servingv1.ReasonDeploying, "")
	}
}

// reasonFailedCreate is the ReplicaSet controller's (and knit dev's
// runtime's) ReplicaFailure reason when the API server refuses a pod.
const reasonFailedCreate = "FailedCreate"

func depCondition(dep *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range dep.Status.Conditions {
		if dep.Status.Conditions[i].Type == t {
			return &dep.Status.Conditions[i]
		}
	}
	return nil
}
