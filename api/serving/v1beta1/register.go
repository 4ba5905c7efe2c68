package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupVersion is Knative's, so existing manifests and clients keep working.
var GroupVersion = schema.GroupVersion{Group: "serving.knative.dev", Version: "v1beta1"}

var (
	// SchemeBuilder registers the v1beta1 types with a runtime scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the v1beta1 types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&DomainMapping{}, &DomainMappingList{})
}
