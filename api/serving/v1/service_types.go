package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// Service is what a user writes: one app, its template and its traffic.
// It owns a Configuration and a Route of the same name.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ksvc;kservice,categories=all;knative;serving
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="LatestCreated",type=string,JSONPath=`.status.latestCreatedRevisionName`
// +kubebuilder:printcolumn:name="LatestReady",type=string,JSONPath=`.status.latestReadyRevisionName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
type Service struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ServiceSpec `json:"spec,omitempty"`
	// +optional
	Status ServiceStatus `json:"status,omitempty"`
}

// ServiceSpec is a Configuration's spec and a Route's spec side by side.
type ServiceSpec struct {
	ConfigurationSpec `json:",inline"`
	RouteSpec         `json:",inline"`
}

// ServiceStatus merges what the Configuration and Route report.
type ServiceStatus struct {
	duckv1.Status             `json:",inline"`
	ConfigurationStatusFields `json:",inline"`
	RouteStatusFields         `json:",inline"`
}

// Service condition types beyond Ready.
const (
	// ServiceConditionConfigurationsReady mirrors the Configuration's Ready.
	ServiceConditionConfigurationsReady duckv1.ConditionType = "ConfigurationsReady"
	// ServiceConditionRoutesReady mirrors the Route's Ready.
	ServiceConditionRoutesReady duckv1.ConditionType = "RoutesReady"
)

// ServiceConditions is the Service's checklist.
var ServiceConditions = duckv1.NewLivingConditionSet(ServiceConditionConfigurationsReady, ServiceConditionRoutesReady)

// +kubebuilder:object:root=true

// ServiceList is a list of Services.
type ServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Service `json:"items"`
}
