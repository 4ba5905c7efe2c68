package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestWithCanaries(t *testing.T) {
	latest := func(p int64) servingv1.TrafficTarget {
		return servingv1.TrafficTarget{LatestRevision: ptr.To(true), Percent: ptr.To(p)}
	}
	pinned := func(name string, p int64) servingv1.TrafficTarget {
		return servingv1.TrafficTarget{RevisionName: name, Percent: ptr.To(p)}
	}
	canary := func(n string, p int64) servingv1.TrafficTarget {
		return servingv1.TrafficTarget{Tag: "pr-" + n, RevisionName: "hello-pr" + n + "-abc", LatestRevision: ptr.To(false), Percent: ptr.To(p)}
	}
	c := func(n string, p int64) Canary {
		return Canary{Tag: "pr-" + n, RevisionName: "hello-pr" + n + "-abc", Percent: p}
	}
	tests := []struct {
		name     string
		traffic  []servingv1.TrafficTarget
		canaries []Canary
		want     []servingv1.TrafficTarget
	}{
		{"no pull requests: Git's traffic as is", nil, nil, nil},
		{"default traffic gives up the canary share", nil, []Canary{c("1", 20)}, []servingv1.TrafficTarget{latest(80), canary("1", 20)}},
		{"tag only", nil, []Canary{c("1", 0)}, []servingv1.TrafficTarget{latest(100), canary("1", 0)}},
		{"a split gives up in proportion, exact to 100", []servingv1.TrafficTarget{pinned("a", 50), latest(50)}, []Canary{c("1", 25)},
			[]servingv1.TrafficTarget{pinned("a", 38), latest(37), canary("1", 25)}},
		{"canaries over 100 are scaled to fit", nil, []Canary{c("1", 80), c("2", 80)},
			[]servingv1.TrafficTarget{latest(0), canary("1", 50), canary("2", 50)}},
		{"tag-only targets in Git keep no percent", []servingv1.TrafficTarget{latest(100), {RevisionName: "old", Tag: "old"}}, []Canary{c("1", 10)},
			[]servingv1.TrafficTarget{latest(90), {RevisionName: "old", Tag: "old"}, canary("1", 10)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WithCanaries(tt.traffic, tt.canaries)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("traffic (-want +got):\n%s", diff)
			}
			var sum int64
			for _, tg := range got {
				sum += ptr.Deref(tg.Percent, 0)
			}
			if len(got) > 0 && sum != 100 {
				t.Errorf("percents sum to %d", sum)
			}
		})
	}
}
