// Package servingtest runs the serving reconcilers together against a
// real kube-apiserver (envtest) and plays the part of the runtime itself —
// writing Deployment status and EndpointSlices — so each Knative behaviour
// is checked end to end through the API without processes.
package servingtest
