package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// ServerlessService (SKS) owns a Revision's public and private Kubernetes
// Services and switches the public endpoints between the replicas and the
// activators as the Revision scales to and from zero.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sks,categories=all;knative-internal;networking
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Activators",type=integer,JSONPath=`.spec.numActivators`
// +kubebuilder:printcolumn:name="ServiceName",type=string,JSONPath=`.status.serviceName`
// +kubebuilder:printcolumn:name="PrivateServiceName",type=string,JSONPath=`.status.privateServiceName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
type ServerlessService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ServerlessServiceSpec `json:"spec,omitempty"`
	// +optional
	Status ServerlessServiceStatus `json:"status,omitempty"`
}

// ServerlessServiceOperationMode says where the public endpoints point.
// +kubebuilder:validation:Enum=Serve;Proxy
type ServerlessServiceOperationMode string

// Modes as Knative defines them.
const (
	// SKSOperationModeServe: public endpoints are the Revision's ready replicas.
	SKSOperationModeServe ServerlessServiceOperationMode = "Serve"
	// SKSOperationModeProxy: public endpoints are the activators, which buffer.
	SKSOperationModeProxy ServerlessServiceOperationMode = "Proxy"
)

// ServerlessServiceSpec names the replicas and the mode to serve them in.
type ServerlessServiceSpec struct {
	// Mode decides where the public endpoints point.
	Mode ServerlessServiceOperationMode `json:"mode"`
	// NumActivators is how many activators to put in the path in Proxy mode.
	// +optional
	NumActivators int32 `json:"numActivators,omitempty"`
	// ObjectRef is the Deployment whose replicas are served.
	ObjectRef corev1.ObjectReference `json:"objectRef"`
	// ProtocolType the replicas speak.
	ProtocolType autoscalingv1alpha1.ProtocolType `json:"protocolType"`
}

// ServerlessServiceStatus names the Services the SKS manages.
type ServerlessServiceStatus struct {
	duckv1.Status `json:",inline"`

	// ServiceName is the public Service: what the ingress routes to.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// PrivateServiceName is the Service over the replicas themselves.
	// +optional
	PrivateServiceName string `json:"privateServiceName,omitempty"`
}

// ServerlessService condition types beyond Ready, as Knative names them.
const (
	// SKSConditionEndpointsPopulated: the public Service has endpoints.
	SKSConditionEndpointsPopulated duckv1.ConditionType = "EndpointsPopulated"
	// SKSConditionActivatorEndpointsPopulated: informational, activators are known.
	SKSConditionActivatorEndpointsPopulated duckv1.ConditionType = "ActivatorEndpointsPopulated"
)

// ServerlessServiceConditions is the SKS's checklist.
var ServerlessServiceConditions = duckv1.NewLivingConditionSet(SKSConditionEndpointsPopulated)

// +kubebuilder:object:root=true

// ServerlessServiceList is a list of ServerlessServices.
type ServerlessServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServerlessService `json:"items"`
}
