package pullrequest

import (
	"context"
	"fmt"
	"net/http"

	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/dataplane/kpa"
	"github.com/knitops/knit/dataplane/queue"
	"github.com/knitops/knit/gitsync/canary"
)

// MetricsFromEndpoints reads a revision's metrics from its replicas'
// queue-proxies, found through the revision's private EndpointSlices as
// the autoscaler finds them: the numbers the canary is judged on are the
// ones the queue-proxy exports, no other pipeline.
func MetricsFromEndpoints(c client.Reader, hc *http.Client) func(ctx context.Context, namespace, revision string) (map[string]canary.Snapshot, error) {
	return func(ctx context.Context, namespace, revision string) (map[string]canary.Snapshot, error) {
		slices := &discoveryv1.EndpointSliceList{}
		if err := c.List(ctx, slices, client.InNamespace(namespace),
			client.MatchingLabels{discoveryv1.LabelServiceName: revision + "-private"}); err != nil {
			return nil, fmt.Errorf("endpoints of %s: %w", revision, err)
		}
		return canary.ScrapeReplicas(ctx, hc, kpa.ReplicaURLs(slices.Items, queue.MetricsPath))
	}
}
