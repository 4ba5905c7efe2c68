package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// DomainMapping serves the domain it is named after from the Service or
// Route its spec refers to, in its own namespace. Two namespaces cannot
// both have a domain: the one holding its ClusterDomainClaim does.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=dm,categories=all;knative;serving
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
type DomainMapping struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec DomainMappingSpec `json:"spec,omitempty"`
	// +optional
	Status DomainMappingStatus `json:"status,omitempty"`
}

// DomainMappingSpec says what serves the domain.
type DomainMappingSpec struct {
	// Ref is the Addressable the domain serves: a Knative Service or
	// Route (serving.knative.dev/v1), or a Kubernetes Service that is a
	// Route's placeholder, in the DomainMapping's namespace.
	Ref KReference `json:"ref"`
	// TLS names a kubernetes.io/tls Secret in the DomainMapping's
	// namespace whose certificate serves the domain over HTTPS.
	// +optional
	TLS *SecretTLS `json:"tls,omitempty"`
}

// KReference points at an object by kind and name, Knative's duck type.
type KReference struct {
	// Kind of the referent.
	Kind string `json:"kind"`
	// Namespace of the referent; defaults to the DomainMapping's.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the referent.
	Name string `json:"name"`
	// APIVersion of the referent.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// Group of the referent, when APIVersion is not given.
	// +optional
	Group string `json:"group,omitempty"`
	// Address names one of the referent's addresses.
	// +optional
	Address *string `json:"address,omitempty"`
}

// SecretTLS names the Secret holding a domain's certificate.
type SecretTLS struct {
	// SecretName is a kubernetes.io/tls Secret in the DomainMapping's
	// namespace.
	SecretName string `json:"secretName"`
}

// DomainMappingStatus reports where the domain answers and why it does
// or does not.
type DomainMappingStatus struct {
	duckv1.Status `json:",inline"`
	// URL is the domain's URL, https:// once a certificate serves it.
	// +optional
	URL string `json:"url,omitempty"`
	// Address is where the domain answers, the same URL.
	// +optional
	Address *duckv1.Addressable `json:"address,omitempty"`
}

// DomainMapping condition types beyond Ready, as Knative names them.
const (
	// DomainMappingConditionDomainClaimed: this namespace holds the
	// domain's ClusterDomainClaim.
	DomainMappingConditionDomainClaimed duckv1.ConditionType = "DomainClaimed"
	// DomainMappingConditionReferenceResolved: spec.ref names something
	// the ingress can route to.
	DomainMappingConditionReferenceResolved duckv1.ConditionType = "ReferenceResolved"
	// DomainMappingConditionIngressReady: the ingress serves the domain.
	DomainMappingConditionIngressReady duckv1.ConditionType = "IngressReady"
	// DomainMappingConditionCertificateProvisioned: a certificate serves
	// the domain (spec.tls or external-domain-tls). Informational, as on
	// Routes: a certificate that cannot be issued leaves the domain
	// served over HTTP, which is not a failure to serve.
	DomainMappingConditionCertificateProvisioned duckv1.ConditionType = "CertificateProvisioned"
)

// DomainMappingConditions is the DomainMapping's checklist.
var DomainMappingConditions = duckv1.NewLivingConditionSet(
	DomainMappingConditionDomainClaimed, DomainMappingConditionReferenceResolved, DomainMappingConditionIngressReady)

// +kubebuilder:object:root=true

// DomainMappingList is a list of DomainMappings.
type DomainMappingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DomainMapping `json:"items"`
}
