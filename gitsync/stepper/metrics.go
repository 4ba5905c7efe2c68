package stepper

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/dataplane/kpa"
	"github.com/knitops/knit/dataplane/queue"
	"github.com/knitops/knit/gitsync/canary"
	"github.com/knitops/knit/internal/endpointslices"
	"github.com/knitops/knit/internal/names"
)

// MetricsFromEndpoints reads a revision's metrics from its replicas'
// queue-proxies, found through the revision's private EndpointSlices as
// the autoscaler finds them: the numbers a canary or a rollout is judged
// on are the ones the queue-proxy exports, no other pipeline. c reads a
// cache with endpointslices' index.
func MetricsFromEndpoints(c client.Reader, hc *http.Client) Metrics {
	return func(ctx context.Context, namespace, revision string) (map[string]canary.Snapshot, error) {
		// Only read, into URLs: no copy of the cache's slices.
		slices, err := endpointslices.List(ctx, c, types.NamespacedName{Namespace: namespace, Name: names.PrivateService(revision)}, client.UnsafeDisableDeepCopy)
		if err != nil {
			return nil, fmt.Errorf("endpoints of revision %s: %w", revision, err)
		}
		return canary.ScrapeReplicas(ctx, hc, kpa.ReplicaURLs(slices, queue.MetricsPath))
	}
}
