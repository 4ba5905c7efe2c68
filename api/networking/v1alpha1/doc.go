// Package v1alpha1 is Knative's internal networking API: the
// ServerlessService that decides whether a Revision's traffic goes straight
// to its replicas (Serve) or through the activator (Proxy).
//
// +kubebuilder:object:generate=true
// +groupName=networking.internal.knative.dev
package v1alpha1
