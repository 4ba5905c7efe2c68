package resources

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// RoutingStateLabelKey is set by the Route reconciler on Revisions it
// sends traffic to (active) or no longer does (reserve), as Knative's.
const RoutingStateLabelKey = "serving.knative.dev/routingState"

// RoutingStateModifiedAnnotation records when a Revision's routing state
// last changed; the GC measures last-active time from it, as Knative's.
const RoutingStateModifiedAnnotation = "serving.knative.dev/routingStateModified"

// MakePodAutoscaler builds the Revision's PodAutoscaler; the Revision's
// annotations (autoscaling.knative.dev/*) travel with it.
func MakePodAutoscaler(rev *servingv1.Revision) *autoscalingv1alpha1.PodAutoscaler {
	protocol := autoscalingv1alpha1.ProtocolHTTP1
	if IsH2C(rev) {
		protocol = autoscalingv1alpha1.ProtocolH2C
	}
	return &autoscalingv1alpha1.PodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{
			Name:            PodAutoscalerName(rev),
			Namespace:       rev.Namespace,
			Labels:          podLabels(rev),
			Annotations:     podAnnotations(rev),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rev, servingv1.GroupVersion.WithKind("Revision"))},
		},
		Spec: autoscalingv1alpha1.PodAutoscalerSpec{
			ContainerConcurrency: ptr.Deref(rev.Spec.ContainerConcurrency, 0),
			ScaleTargetRef:       corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: DeploymentName(rev)},
			Reachability:         reachability(rev),
			ProtocolType:         protocol,
		},
	}
}

// reachability follows the routing state the Route reconciler labels: a
// Revision no Route references may scale to zero at once.
func reachability(rev *servingv1.Revision) autoscalingv1alpha1.ReachabilityType {
	switch rev.Labels[RoutingStateLabelKey] {
	case "active":
		return autoscalingv1alpha1.ReachabilityReachable
	case "reserve":
		return autoscalingv1alpha1.ReachabilityUnreachable
	}
	return autoscalingv1alpha1.ReachabilityUnknown
}
