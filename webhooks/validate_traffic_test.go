package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestValidateTraffic(t *testing.T) {
	tagged := func(tt servingv1.TrafficTarget, tag string) servingv1.TrafficTarget {
		tt.Tag = tag
		return tt
	}
	config := func(name string, percent int64) servingv1.TrafficTarget {
		return servingv1.TrafficTarget{ConfigurationName: name, LatestRevision: ptr.To(true), Percent: ptr.To(percent)}
	}
	tests := []struct {
		name      string
		traffic   []servingv1.TrafficTarget
		inService bool
		want      []string
	}{{
		name: "no traffic is fine (a Service defaults it)",
	}, {
		name:      "a Service's canary",
		inService: true,
		traffic:   []servingv1.TrafficTarget{pinned("hello-00001", 90), tagged(latest(10), "canary")},
	}, {
		name:    "a Route splitting over a Configuration and a Revision",
		traffic: []servingv1.TrafficTarget{config("hello", 50), pinned("hello-00001", 50)},
	}, {
		name:    "percents that do not add up to 100",
		traffic: []servingv1.TrafficTarget{config("hello", 50), pinned("hello-00001", 40)},
		want:    []string{"invalid value: 90: spec.traffic\ntraffic targets' percents add up to 90; they must add up to 100"},
	}, {
		name:    "a percent out of range",
		traffic: []servingv1.TrafficTarget{config("hello", 101), pinned("hello-00001", -1)},
		want: []string{
			"invalid value: 101: spec.traffic[0].percent\nmust be between 0 and 100",
			"invalid value: -1: spec.traffic[1].percent\nmust be between 0 and 100",
		},
	}, {
		name:      "latestRevision true with a revisionName",
		inService: true,
		traffic:   []servingv1.TrafficTarget{{RevisionName: "hello-00001", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}},
		want:      []string{"invalid value: true: spec.traffic[0].latestRevision\nmay not set revisionName \"hello-00001\" when latestRevision is true"},
	}, {
		name:      "latestRevision false without a revisionName",
		inService: true,
		traffic:   []servingv1.TrafficTarget{{LatestRevision: ptr.To(false), Percent: ptr.To[int64](100)}},
		want:      []string{"invalid value: false: spec.traffic[0].latestRevision\nmay not set revisionName \"\" when latestRevision is false"},
	}, {
		name:      "a Service target naming a Configuration",
		inService: true,
		traffic:   []servingv1.TrafficTarget{config("other", 100)},
		want:      []string{"must not set the field(s): spec.traffic[0].configurationName\na Service's targets follow its own Configuration; use latestRevision or revisionName"},
	}, {
		name:    "a Route target naming both",
		traffic: []servingv1.TrafficTarget{{RevisionName: "hello-00001", ConfigurationName: "hello", LatestRevision: ptr.To(false), Percent: ptr.To[int64](100)}},
		want:    []string{"set only one of revisionName and configurationName: spec.traffic[0].configurationName"},
	}, {
		name:    "a Route target naming neither",
		traffic: []servingv1.TrafficTarget{latest(100)},
		want:    []string{"missing field(s): spec.traffic[0].revisionName\nset one of revisionName or configurationName"},
	}, {
		name:    "a name that cannot be a Revision's",
		traffic: []servingv1.TrafficTarget{pinned("Hello_1", 100)},
		want:    []string{"invalid value: Hello_1: spec.traffic[0].revisionName\na DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"},
	}, {
		name:      "duplicate and invalid tags, and a url in spec",
		inService: true,
		traffic: []servingv1.TrafficTarget{
			tagged(pinned("hello-00001", 50), "v1"),
			func() servingv1.TrafficTarget {
				tt := tagged(latest(50), "v1")
				tt.URL = "http://v1-hello.example.com"
				return tt
			}(),
			tagged(pinned("hello-00002", 0), "-bad"),
		},
		want: []string{
			"must not set the field(s): spec.traffic[1].url\nthe URL is reported in status",
			"invalid value: v1: spec.traffic[1].tag\ntag is already used by spec.traffic[0]",
			"invalid value: -bad: spec.traffic[2].tag\na DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateTraffic(tc.traffic, field.NewPath("spec", "traffic"), tc.inService))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
