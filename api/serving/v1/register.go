package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupVersion is Knative's, so existing manifests and clients keep working.
var GroupVersion = schema.GroupVersion{Group: "serving.knative.dev", Version: "v1"}

var (
	// SchemeBuilder registers the serving types with a runtime scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the serving types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(
		&Service{}, &ServiceList{},
		&Configuration{}, &ConfigurationList{},
		&Revision{}, &RevisionList{},
		&Route{}, &RouteList{},
	)
}
