package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupName is Knative's internal networking group, the prefix of its labels.
const GroupName = "networking.internal.knative.dev"

// GroupVersion is Knative's internal networking group.
var GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

var (
	// SchemeBuilder registers the networking types with a runtime scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the networking types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&ServerlessService{}, &ServerlessServiceList{}, &ClusterDomainClaim{}, &ClusterDomainClaimList{})
}
