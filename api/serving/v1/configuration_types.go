package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// Configuration is the desired state of an app; every change to its
// template stamps a new immutable Revision. In Git terms it is a branch.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=config;cfg,categories=all;knative;serving
// +kubebuilder:printcolumn:name="LatestCreated",type=string,JSONPath=`.status.latestCreatedRevisionName`
// +kubebuilder:printcolumn:name="LatestReady",type=string,JSONPath=`.status.latestReadyRevisionName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
type Configuration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ConfigurationSpec `json:"spec,omitempty"`
	// +optional
	Status ConfigurationStatus `json:"status,omitempty"`
}

// ConfigurationSpec holds the template Revisions are stamped from.
type ConfigurationSpec struct {
	// Template of the Revisions to create.
	// +optional
	Template RevisionTemplateSpec `json:"template"`
}

// ConfigurationStatusFields are shared with the Service's status.
type ConfigurationStatusFields struct {
	// LatestReadyRevisionName is the newest Revision that became Ready.
	// +optional
	LatestReadyRevisionName string `json:"latestReadyRevisionName,omitempty"`
	// LatestCreatedRevisionName is the newest Revision stamped, ready or not.
	// +optional
	LatestCreatedRevisionName string `json:"latestCreatedRevisionName,omitempty"`
}

// ConfigurationStatus reports which Revisions exist and which is ready.
type ConfigurationStatus struct {
	duckv1.Status             `json:",inline"`
	ConfigurationStatusFields `json:",inline"`
}

// ConfigurationConditions is the Configuration's checklist: Ready alone,
// marked from the latest created Revision.
var ConfigurationConditions = duckv1.NewLivingConditionSet()

// +kubebuilder:object:root=true

// ConfigurationList is a list of Configurations.
type ConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Configuration `json:"items"`
}
