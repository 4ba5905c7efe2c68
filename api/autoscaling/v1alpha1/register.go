package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupVersion is Knative's internal autoscaling group.
var GroupVersion = schema.GroupVersion{Group: "autoscaling.internal.knative.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers the autoscaling types with a runtime scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the autoscaling types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&PodAutoscaler{}, &PodAutoscalerList{})
}
