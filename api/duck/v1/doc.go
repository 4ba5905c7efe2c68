// Package v1 holds the status shapes every knit resource shares with Knative:
// conditions with severities, a condition set that derives Ready from its
// dependents, and Addressable. Keeping them in one room means a reconciler
// never spells a condition by hand and kubectl columns read the same on every
// kind.
//
// +kubebuilder:object:generate=true
package v1
