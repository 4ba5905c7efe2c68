// Package v1alpha1 is Knative's internal autoscaling API: the PodAutoscaler
// a Revision owns, through which the KPA's decisions reach the Deployment.
//
// +kubebuilder:object:generate=true
// +groupName=autoscaling.internal.knative.dev
package v1alpha1
