// Package endpointslicestest gives tests the EndpointSlice index on
// controller-runtime's fake client, which, like a cache, answers
// endpointslices.List only with the index registered. It is its own
// package so that no binary links the fake client.
package endpointslicestest

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/internal/endpointslices"
)

// WithIndex registers the index on b. Give b its scheme first: the fake
// client resolves EndpointSlice's kind with the scheme b has then.
func WithIndex(b *fake.ClientBuilder) *fake.ClientBuilder {
	return b.WithIndex(&discoveryv1.EndpointSlice{}, endpointslices.Field, endpointslices.ServiceName)
}
