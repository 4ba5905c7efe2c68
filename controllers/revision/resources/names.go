// Package resources builds a Revision's children — Deployment and
// PodAutoscaler — as pure functions of the Revision and config.
package resources

import (
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/names"
)

// DeploymentName is Knative's <revision>-deployment, shortened to fit 63
// characters as Knative shortens it.
func DeploymentName(rev *servingv1.Revision) string { return names.Deployment(rev.Name) }

// PodAutoscalerName is the Revision's own name, as in Knative.
func PodAutoscalerName(rev *servingv1.Revision) string { return rev.Name }

// Container and port names of the pod, Knative's so tooling finds them.
const (
	QueueContainerName = "queue-proxy"
	// QueueHTTPPortName is the queue-proxy's serving port; Services target it.
	QueueHTTPPortName = "http"
	// QueueMetricsPortName is where the autoscaler scrapes the queue-proxy.
	QueueMetricsPortName = "http-autometric"
	// QueueAdminPortName serves the queue-proxy's health and drain endpoints.
	QueueAdminPortName = "queue-admin"
	// QueueHTTPPort, QueueMetricsPort and QueueAdminPort are the declared
	// ports (remapped per replica by the local runtime).
	QueueHTTPPort    = 8012
	QueueMetricsPort = 9091
	QueueAdminPort   = 8022
	// DefaultUserPort is where the app listens when the Revision names none.
	DefaultUserPort = 8080
)
