package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// Revision is an immutable snapshot of code and configuration; in Git
// terms, a commit. Its spec never changes after creation.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rev,categories=all;knative;serving
// +kubebuilder:printcolumn:name="Config Name",type=string,JSONPath=`.metadata.labels['serving\.knative\.dev/configuration']`
// +kubebuilder:printcolumn:name="Generation",type=string,JSONPath=`.metadata.labels['serving\.knative\.dev/configurationGeneration']`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Actual Replicas",type=integer,JSONPath=`.status.actualReplicas`
// +kubebuilder:printcolumn:name="Desired Replicas",type=integer,JSONPath=`.status.desiredReplicas`
// +kubebuilder:printcolumn:name="Commit",type=string,JSONPath=`.metadata.annotations['knit\.dev/commit']`,description="The Git commit the Revision was deployed from"
// +kubebuilder:printcolumn:name="Message",type=string,priority=1,JSONPath=`.metadata.annotations['knit\.dev/message']`,description="The commit's subject"
type Revision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec RevisionSpec `json:"spec,omitempty"`
	// +optional
	Status RevisionStatus `json:"status,omitempty"`
}

// RevisionStatus says whether the Revision's replicas run and serve.
type RevisionStatus struct {
	duckv1.Status `json:",inline"`

	// LogURL points at the Revision's logs, when a log system is known.
	// +optional
	LogURL string `json:"logUrl,omitempty"`
	// ContainerStatuses records the image each container resolved to.
	// +optional
	ContainerStatuses []ContainerStatus `json:"containerStatuses,omitempty"`
	// InitContainerStatuses records the image each init container
	// resolved to.
	// +optional
	InitContainerStatuses []ContainerStatus `json:"initContainerStatuses,omitempty"`
	// ActualReplicas is how many replicas are ready now.
	// +optional
	ActualReplicas *int32 `json:"actualReplicas,omitempty"`
	// DesiredReplicas is how many replicas the autoscaler asked for.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`
}

// ContainerStatus records what one container's image resolved to.
type ContainerStatus struct {
	Name string `json:"name,omitempty"`
	// ImageDigest is the image the container runs, as
	// <repository>@sha256:<hex>, read from what its pods' kubelet pulled;
	// unset where no pod reports one (knit dev, ko:// images).
	ImageDigest string `json:"imageDigest,omitempty"`
}

// Revision condition types beyond Ready, as Knative names them.
const (
	// RevisionConditionResourcesAvailable: the Deployment and its replicas exist.
	RevisionConditionResourcesAvailable duckv1.ConditionType = "ResourcesAvailable"
	// RevisionConditionContainerHealthy: the app starts and passes readiness.
	RevisionConditionContainerHealthy duckv1.ConditionType = "ContainerHealthy"
	// RevisionConditionActive: the Revision has replicas (False when scaled to zero).
	RevisionConditionActive duckv1.ConditionType = "Active"
)

// RevisionConditions is the Revision's checklist; Active is informational,
// so a Revision scaled to zero stays Ready.
var RevisionConditions = duckv1.NewLivingConditionSet(RevisionConditionResourcesAvailable, RevisionConditionContainerHealthy)

// +kubebuilder:object:root=true

// RevisionList is a list of Revisions.
type RevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Revision `json:"items"`
}
