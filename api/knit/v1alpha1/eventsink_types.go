package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// EventSink is an HTTP endpoint that receives knit's CloudEvents, such as
// dev.knit.revision.ready, so CI, chat or dashboards learn of a rollout
// without polling.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=all;knit
// +kubebuilder:printcolumn:name="URI",type=string,JSONPath=`.spec.uri`
// +kubebuilder:printcolumn:name="Delivered",type=integer,JSONPath=`.status.delivered`
// +kubebuilder:printcolumn:name="Dropped",type=integer,JSONPath=`.status.dropped`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type EventSink struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec EventSinkSpec `json:"spec"`
	// +optional
	Status EventSinkStatus `json:"status,omitempty"`
}

// EventEncoding is the CloudEvents HTTP content mode.
// +kubebuilder:validation:Enum=structured;binary
type EventEncoding string

// CloudEvents HTTP content modes.
const (
	EventEncodingStructured EventEncoding = "structured"
	EventEncodingBinary     EventEncoding = "binary"
)

// EventSinkSpec says where to send which events.
type EventSinkSpec struct {
	// URI of the sink; events are POSTed to it. Only http and https are
	// accepted; where it may point is knit's egress policy's to say
	// (loopback, link-local and the control plane's own addresses are
	// refused unless config-network's egress-allow lists them).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self.lowerAscii().startsWith('http://') || self.lowerAscii().startsWith('https://')",message="must be an http:// or https:// URL: knit POSTs CloudEvents to it"
	URI string `json:"uri"`
	// Types of events to send; empty means all.
	// +optional
	Types []string `json:"types,omitempty"`
	// Encoding of events on the wire.
	// +kubebuilder:default=binary
	// +optional
	Encoding EventEncoding `json:"encoding,omitempty"`
}

// EventSinkStatus counts deliveries so an outage is visible.
type EventSinkStatus struct {
	duckv1.Status `json:",inline"`

	// Delivered is how many events the sink accepted.
	// +optional
	Delivered int64 `json:"delivered,omitempty"`
	// Dropped is how many events were given up on after retries.
	// +optional
	Dropped int64 `json:"dropped,omitempty"`
}

// EventSinkConditions is the EventSink's checklist: Ready alone.
var EventSinkConditions = duckv1.NewLivingConditionSet()

// +kubebuilder:object:root=true

// EventSinkList is a list of EventSinks.
type EventSinkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EventSink `json:"items"`
}
