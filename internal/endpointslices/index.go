package endpointslices

import (
	"context"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Field is the name of the cache index of EndpointSlices by Service: what
// List asks for with client.MatchingFields.
const Field = "endpointslice.serviceName"

// indexName is what controller-runtime names Field's index in the
// informer (its internal FieldIndexName), how Index finds it there.
const indexName = "field:" + Field

// ServiceName is the index function: a slice's key is the Service named
// by its kubernetes.io/service-name label; a slice without one (a
// hand-made slice that belongs to no Service) has none.
func ServiceName(obj client.Object) []string {
	if name := obj.GetLabels()[discoveryv1.LabelServiceName]; name != "" {
		return []string{name}
	}
	return nil
}

// Index registers the index on a manager's cache (mgr.GetCache()), once:
// a later call on the same cache finds it there and does nothing. Every
// component that looks slices up calls it from its own setup, so a lookup
// works however the components are put on managers (knit dev puts the
// autoscaler, the activator and the local runtime on one, and makes the
// controllers' anew at each restart; a cluster gives each its own), and
// no one must remember to register it where a manager is made, tests
// included. controller-runtime refuses a second registration of a field,
// hence the check. Call it before the cache starts, from one goroutine at
// a time, as SetupWithManager functions run.
func Index(ctx context.Context, informers cache.Informers) error {
	informer, err := informers.GetInformer(ctx, &discoveryv1.EndpointSlice{}, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("EndpointSlice informer: %w", err)
	}
	if indexed(informer) {
		return nil
	}
	if err := informers.IndexField(ctx, &discoveryv1.EndpointSlice{}, Field, ServiceName); err != nil {
		return fmt.Errorf("index EndpointSlices by %s: %w", discoveryv1.LabelServiceName, err)
	}
	return nil
}

// indexed says whether the informer has the index. A cache of several
// namespaces hides its informers' indexers: there it says no, and a
// second registration fails loudly rather than silently.
func indexed(informer cache.Informer) bool {
	i, ok := informer.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return false
	}
	_, ok = i.GetIndexer().GetIndexers()[indexName]
	return ok
}
