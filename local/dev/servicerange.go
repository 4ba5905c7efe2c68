package dev

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/controlplane"
)

// serviceRangeName names the ServiceCIDR knit dev adds beside the API
// server's own.
const serviceRangeName = "knit-dev"

// ensureServiceRange makes controlplane.ServiceRange allocatable even in a
// state directory whose API server first started with a smaller range:
// the API server keeps its default ServiceCIDR as first created, whatever
// --service-cluster-ip-range says later, and allocates from every
// ServiceCIDR, so one more covering the whole range is what widens it.
// On a fresh state directory it repeats the default, which is harmless.
func ensureServiceRange(ctx context.Context, c client.Client) error {
	return applyObject(ctx, c, &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: serviceRangeName},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{controlplane.ServiceRange}},
	})
}
