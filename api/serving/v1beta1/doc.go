// Package v1beta1 is Knative Serving's serving.knative.dev/v1beta1 API as
// knit serves it: DomainMapping, which serves a domain of the user's own
// (shop.example.com) from a Service or Route of the same namespace, with
// Knative's fields and conditions so existing manifests and clients work.
//
// +kubebuilder:object:generate=true
// +groupName=serving.knative.dev
package v1beta1
