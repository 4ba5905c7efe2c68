package webhooks

import (
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// defaultTraffic returns the traffic block as Knative's RouteSpec.SetDefaults
// leaves it. In a Service an empty block sends all traffic to the latest
// ready Revision; a standalone Route has no Configuration to default to.
// Every target that leaves latestRevision unset follows the latest
// Revision unless it pins one by revisionName.
func defaultTraffic(traffic []servingv1.TrafficTarget, inService bool) []servingv1.TrafficTarget {
	if len(traffic) == 0 && inService {
		return []servingv1.TrafficTarget{{LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}
	}
	for i := range traffic {
		if traffic[i].LatestRevision == nil {
			traffic[i].LatestRevision = ptr.To(traffic[i].RevisionName == "")
		}
	}
	return traffic
}
