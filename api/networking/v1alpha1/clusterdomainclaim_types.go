package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterDomainClaim gives one namespace a domain name: only a
// DomainMapping of that namespace may serve it. It is named after the
// domain and cluster-scoped, so the API server itself keeps two
// namespaces from holding one domain. An operator makes them (or lets
// config-network's autocreate-cluster-domain-claims make them for the
// first DomainMapping to ask).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=knative-internal;networking
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.spec.namespace`
type ClusterDomainClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ClusterDomainClaimSpec `json:"spec,omitempty"`
}

// ClusterDomainClaimSpec names the namespace that holds the domain.
type ClusterDomainClaimSpec struct {
	// Namespace whose DomainMappings may serve the domain.
	Namespace string `json:"namespace"`
}

// +kubebuilder:object:root=true

// ClusterDomainClaimList is a list of ClusterDomainClaims.
type ClusterDomainClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterDomainClaim `json:"items"`
}
