package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// PodAutoscaler carries one Revision's scaling: the autoscaler writes the
// desired scale here and the controller applies it to the Deployment.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kpa;pa,categories=all;knative-internal;autoscaling
// +kubebuilder:printcolumn:name="DesiredScale",type=integer,JSONPath=`.status.desiredScale`
// +kubebuilder:printcolumn:name="ActualScale",type=integer,JSONPath=`.status.actualScale`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
type PodAutoscaler struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec PodAutoscalerSpec `json:"spec,omitempty"`
	// +optional
	Status PodAutoscalerStatus `json:"status,omitempty"`
}

// ReachabilityType says whether any Route sends traffic to the Revision;
// an unreachable Revision may scale to zero at once.
// +kubebuilder:validation:Enum=Reachable;Unreachable;""
type ReachabilityType string

// Reachability values as Knative defines them.
const (
	ReachabilityUnknown     ReachabilityType = ""
	ReachabilityReachable   ReachabilityType = "Reachable"
	ReachabilityUnreachable ReachabilityType = "Unreachable"
)

// ProtocolType is the protocol the app speaks behind the queue-proxy.
// +kubebuilder:validation:Enum=http1;h2c
type ProtocolType string

// Protocols the data plane forwards.
const (
	ProtocolHTTP1 ProtocolType = "http1"
	ProtocolH2C   ProtocolType = "h2c"
)

// PodAutoscalerSpec says what to scale and how many requests a replica takes.
type PodAutoscalerSpec struct {
	// ContainerConcurrency of the Revision; 0 means unlimited.
	// +optional
	ContainerConcurrency int64 `json:"containerConcurrency,omitempty"`
	// ScaleTargetRef is the Deployment to scale.
	ScaleTargetRef corev1.ObjectReference `json:"scaleTargetRef"`
	// Reachability of the Revision from any Route.
	// +optional
	Reachability ReachabilityType `json:"reachability,omitempty"`
	// ProtocolType the Revision's app speaks.
	ProtocolType ProtocolType `json:"protocolType"`
}

// PodAutoscalerStatus reports the scale asked for and observed.
type PodAutoscalerStatus struct {
	duckv1.Status `json:",inline"`

	// ServiceName is the public Kubernetes Service of the SKS.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// MetricsServiceName is the Service the autoscaler scrapes.
	// +optional
	MetricsServiceName string `json:"metricsServiceName,omitempty"`
	// DesiredScale is the replica count the autoscaler wants.
	// +optional
	DesiredScale *int32 `json:"desiredScale,omitempty"`
	// ActualScale is the replica count ready now.
	// +optional
	ActualScale *int32 `json:"actualScale,omitempty"`
}

// PodAutoscaler condition types beyond Ready, as Knative names them.
const (
	// PodAutoscalerConditionActive: replicas exist to take requests.
	PodAutoscalerConditionActive duckv1.ConditionType = "Active"
	// PodAutoscalerConditionScaleTargetInitialized: the target reached its initial scale once.
	PodAutoscalerConditionScaleTargetInitialized duckv1.ConditionType = "ScaleTargetInitialized"
	// PodAutoscalerConditionSKSReady: the ServerlessService is ready.
	PodAutoscalerConditionSKSReady duckv1.ConditionType = "SKSReady"
)

// PodAutoscalerConditions is the PodAutoscaler's checklist.
var PodAutoscalerConditions = duckv1.NewLivingConditionSet(PodAutoscalerConditionActive, PodAutoscalerConditionScaleTargetInitialized, PodAutoscalerConditionSKSReady)

// +kubebuilder:object:root=true

// PodAutoscalerList is a list of PodAutoscalers.
type PodAutoscalerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodAutoscaler `json:"items"`
}
