// Package v1alpha1 is knit's own GitOps API, group knit.dev: the Git
// repositories knit tracks, the pull requests it rolls out as canaries, and
// the CloudEvents sinks it tells when revisions become ready.
//
// +kubebuilder:object:generate=true
// +groupName=knit.dev
package v1alpha1
