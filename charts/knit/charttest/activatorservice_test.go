//go:build !unit

package charttest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/platform"
)

// The activators answer under Knative's name too: activator-service
// selects the same pods on the same port as knit-activator, so
// Kubernetes gives it the same EndpointSlices and Endpoints.
func TestKnativeActivatorService(t *testing.T) {
	m := render(t)
	knit := service(t, m, platform.ActivatorService.Service)
	knative := service(t, m, platform.KnativeActivatorService)
	if knative.Namespace != platform.ActivatorService.Namespace {
		t.Errorf("%s is in %q, want %s", knative.Name, knative.Namespace, platform.ActivatorService.Namespace)
	}
	if knative.Spec.Type != corev1.ServiceTypeClusterIP || len(knative.Spec.Selector) == 0 {
		t.Errorf("%s: type %s, selector %v; want ClusterIP with a selector", knative.Name, knative.Spec.Type, knative.Spec.Selector)
	}
	if diff := cmp.Diff(knit.Spec.Selector, knative.Spec.Selector); diff != "" {
		t.Errorf("selector of %s against %s's (-knit +knative):\n%s", knative.Name, knit.Name, diff)
	}
	if diff := cmp.Diff(knit.Spec.Ports, knative.Spec.Ports); diff != "" {
		t.Errorf("ports of %s against %s's (-knit +knative):\n%s", knative.Name, knit.Name, diff)
	}
}
