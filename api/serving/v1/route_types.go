package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// Route splits a host's traffic over Revisions and gives tagged targets
// URLs of their own.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rt,categories=all;knative;serving
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
type Route struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec RouteSpec `json:"spec,omitempty"`
	// +optional
	Status RouteStatus `json:"status,omitempty"`
}

// RouteStatusFields are shared with the Service's status.
type RouteStatusFields struct {
	// URL where the route is reached from outside.
	// +optional
	URL string `json:"url,omitempty"`
	// Address where the route is reached from inside the cluster.
	// +optional
	Address *duckv1.Addressable `json:"address,omitempty"`
	// Traffic as resolved: every target names a Revision.
	// +optional
	Traffic []TrafficTarget `json:"traffic,omitempty"`
}

// RouteStatus reports the resolved traffic and URLs.
type RouteStatus struct {
	duckv1.Status     `json:",inline"`
	RouteStatusFields `json:",inline"`
}

// Route condition types beyond Ready, as Knative names them.
const (
	// RouteConditionAllTrafficAssigned: every target resolved to a ready Revision.
	RouteConditionAllTrafficAssigned duckv1.ConditionType = "AllTrafficAssigned"
	// RouteConditionIngressReady: the ingress serves the route's hosts.
	RouteConditionIngressReady duckv1.ConditionType = "IngressReady"
	// RouteConditionCertificateProvisioned: the route's hosts have a
	// certificate (external-domain-tls). Informational in knit, not one
	// of Ready's dependents: a certificate that cannot be issued leaves
	// the route serving HTTP or its old certificate, which is not a
	// failure to serve.
	RouteConditionCertificateProvisioned duckv1.ConditionType = "CertificateProvisioned"
)

// RouteConditions is the Route's checklist.
var RouteConditions = duckv1.NewLivingConditionSet(RouteConditionAllTrafficAssigned, RouteConditionIngressReady)

// +kubebuilder:object:root=true

// RouteList is a list of Routes.
type RouteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Route `json:"items"`
}
