// Package autoscaling is Knative's autoscaling.knative.dev annotation group
// as knit reads it, Knative's pkg/apis/autoscaling: the per-Revision keys
// with their legacy spellings, Knative's bounds on their values, and the
// one parser the admission webhook, the Revision and PodAutoscaler
// reconcilers and the KPA share, so a key is spelled, and a value judged,
// in one place and refused in the same words wherever it is read.
//
// It imports the standard library only: the KPA (dataplane/autoscaler)
// stays free of client-go.
package autoscaling
