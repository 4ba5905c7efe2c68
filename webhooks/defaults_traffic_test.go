package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestDefaultTraffic(t *testing.T) {
	tests := []struct {
		name      string
		in        []servingv1.TrafficTarget
		inService bool
		want      []servingv1.TrafficTarget
	}{{
		name:      "a Service without traffic sends all of it to the latest Revision",
		inService: true,
		want:      []servingv1.TrafficTarget{latest(100)},
	}, {
		name: "a Route without traffic stays without",
	}, {
		name: "latestRevision follows whether a revision is pinned",
		in: []servingv1.TrafficTarget{
			{RevisionName: "hello-00001", Percent: ptr.To[int64](90)},
			{ConfigurationName: "hello", Percent: ptr.To[int64](10)},
		},
		want: []servingv1.TrafficTarget{
			pinned("hello-00001", 90),
			{ConfigurationName: "hello", LatestRevision: ptr.To(true), Percent: ptr.To[int64](10)},
		},
	}, {
		name:      "an explicit latestRevision is kept, even a wrong one (validation reports it)",
		inService: true,
		in:        []servingv1.TrafficTarget{{RevisionName: "hello-00001", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}},
		want:      []servingv1.TrafficTarget{{RevisionName: "hello-00001", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := defaultTraffic(tc.in, tc.inService)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("defaultTraffic (-want +got):\n%s", diff)
			}
		})
	}
}
