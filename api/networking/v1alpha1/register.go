package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupVersion is Knative's internal networking group.
var GroupVersion = schema.GroupVersion{Group: "networking.internal.knative.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers the networking types with a runtime scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the networking types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&ServerlessService{}, &ServerlessServiceList{})
}
