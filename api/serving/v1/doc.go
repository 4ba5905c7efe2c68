// Package v1 is Knative Serving's serving.knative.dev/v1 API as knit serves
// it: Service, Configuration, Revision and Route with the same fields, short
// names and printer columns, so a manifest written for Knative deploys
// unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=serving.knative.dev
package v1
