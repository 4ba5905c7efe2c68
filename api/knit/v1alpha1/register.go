package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupVersion is knit's own GitOps group.
var GroupVersion = schema.GroupVersion{Group: "knit.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers the GitOps types with a runtime scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the GitOps types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(
		&GitRepository{}, &GitRepositoryList{},
		&PullRequest{}, &PullRequestList{},
		&EventSink{}, &EventSinkList{},
	)
}
