//go:build !unit

package dev

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/knitops/knit/api"
)

// A state directory from before the /16 has an API server whose service
// range is the old /24: 254 addresses, about 126 Revisions. knit dev's
// ServiceCIDR widens it, so the 300 Services of 150 Revisions all get an
// address, and applying it again on the next start changes nothing.
func TestServiceRangeOutgrowsAnOldStateDir(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is unset: run `KUBEBUILDER_ASSETS=$PWD/bin go test`, or `go test -tags unit` for the unit tests alone")
	}
	env := &envtest.Environment{}
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.0.0.0/24")
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 { // knit dev starts twice on the same state
		if err := ensureServiceRange(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("rev-%03d", i)},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}
		if err := c.Create(ctx, svc); err != nil {
			t.Fatalf("Service %d of 300: %v", i+1, err)
		}
	}
}
