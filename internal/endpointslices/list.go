package endpointslices

import (
	"context"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// List returns the EndpointSlices of the Service named service, from the
// index: a map lookup in a manager's cache, whatever else the namespace
// holds. r must read a cache that Index was called on (or a fake client
// built with endpointslicestest.WithIndex, or a client wrapped in
// Uncached). opts add to the lookup: pass client.UnsafeDisableDeepCopy
// where the caller only reads the slices, and say so at the call.
func List(ctx context.Context, r client.Reader, service types.NamespacedName, opts ...client.ListOption) ([]discoveryv1.EndpointSlice, error) {
	var list discoveryv1.EndpointSliceList
	opts = append([]client.ListOption{client.InNamespace(service.Namespace), client.MatchingFields{Field: service.Name}}, opts...)
	if err := r.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("list EndpointSlices of %s: %w", service, err)
	}
	return list.Items, nil
}
