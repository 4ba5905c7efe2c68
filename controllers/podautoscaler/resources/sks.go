// Package resources builds a PodAutoscaler's ServerlessService; pure.
package resources

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
)

// MakeSKS builds the Revision's ServerlessService in the given mode.
func MakeSKS(pa *autoscalingv1alpha1.PodAutoscaler, mode networkingv1alpha1.ServerlessServiceOperationMode, numActivators int32) *networkingv1alpha1.ServerlessService {
	labels := make(map[string]string, len(pa.Labels))
	for k, v := range pa.Labels {
		labels[k] = v
	}
	return &networkingv1alpha1.ServerlessService{
		ObjectMeta: metav1.ObjectMeta{
			Name:            pa.Name,
			Namespace:       pa.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(pa, autoscalingv1alpha1.GroupVersion.WithKind("PodAutoscaler"))},
		},
		Spec: networkingv1alpha1.ServerlessServiceSpec{
			Mode:          mode,
			NumActivators: numActivators,
			ObjectRef:     pa.Spec.ScaleTargetRef,
			ProtocolType:  pa.Spec.ProtocolType,
		},
	}
}
