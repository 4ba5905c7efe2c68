package runtime

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ForgetEarlierEndpoints deletes every EndpointSlice a runtime published,
// and returns the Services (namespace and kubernetes.io/service-name)
// they served, sorted. Call it before a new runtime starts a replica: the
// replicas of an earlier knit dev died with it (or were killed as orphans),
// so their endpoints name ports nobody listens on, and anything that still
// routed to them after a restart would meet a refused connection until
// this runtime's first pass deleted them.
func ForgetEarlierEndpoints(ctx context.Context, c client.Client) ([]types.NamespacedName, error) {
	var list discoveryv1.EndpointSliceList
	if err := c.List(ctx, &list, client.MatchingLabels{discoveryv1.LabelManagedBy: ManagedBy}); err != nil {
		return nil, fmt.Errorf("list the endpoints of earlier replicas: %w", err)
	}
	var services []types.NamespacedName
	for i := range list.Items {
		s := &list.Items[i]
		if err := client.IgnoreNotFound(c.Delete(ctx, s)); err != nil {
			return nil, fmt.Errorf("delete EndpointSlice %s/%s of an earlier replica: %w", s.Namespace, s.Name, err)
		}
		services = append(services, types.NamespacedName{Namespace: s.Namespace, Name: s.Labels[discoveryv1.LabelServiceName]})
	}
	slices.SortFunc(services, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return slices.Compact(services), nil
}
