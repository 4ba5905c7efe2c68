// Package webhooks is knit's admission room: it defaults and validates
// Services, Configurations, Revisions and Routes the way Knative Serving's
// webhook does, so a manifest written for Knative is stored in the same
// shape and refused for the same reasons, in the same words: validators
// collect Kubernetes' field.ErrorList, and a refusal renders it as
// Knative's apis.FieldError does (fielderror.go), which clients written
// for Knative match on.
//
// Defaulting and validation are pure functions over the API types
// (defaults_*.go, validate_*.go); admission.go adapts them to
// controller-runtime's generic webhook API and setup.go registers them and
// builds the matching webhook configurations.
package webhooks
