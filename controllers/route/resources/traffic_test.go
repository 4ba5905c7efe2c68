package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestReferences(t *testing.T) {
	tests := []struct {
		name     string
		spec     []servingv1.TrafficTarget
		wantCfgs []string
		wantRevs []string
	}{{
		name: "none",
	}, {
		name:     "a Service's route follows its Configuration",
		spec:     []servingv1.TrafficTarget{{ConfigurationName: "hello", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}},
		wantCfgs: []string{"hello"},
	}, {
		name:     "latestRevision unset follows the Configuration",
		spec:     []servingv1.TrafficTarget{{ConfigurationName: "hello"}},
		wantCfgs: []string{"hello"},
	}, {
		name:     "a pinned Revision",
		spec:     []servingv1.TrafficTarget{{RevisionName: "hello-00001", LatestRevision: ptr.To(false)}},
		wantRevs: []string{"hello-00001"},
	}, {
		name:     "latestRevision false reads the named Revision, not the Configuration",
		spec:     []servingv1.TrafficTarget{{ConfigurationName: "hello", RevisionName: "hello-00001", LatestRevision: ptr.To(false)}},
		wantRevs: []string{"hello-00001"},
	}, {
		name: "a split, tags and repeats: sorted, each once",
		spec: []servingv1.TrafficTarget{
			{ConfigurationName: "world", Percent: ptr.To[int64](10)},
			{RevisionName: "hello-00002", LatestRevision: ptr.To(false), Percent: ptr.To[int64](40)},
			{RevisionName: "hello-00001", LatestRevision: ptr.To(false), Percent: ptr.To[int64](50)},
			{ConfigurationName: "hello", Tag: "latest"},
			{RevisionName: "hello-00001", LatestRevision: ptr.To(false), Tag: "stable"},
			{ConfigurationName: "world", Tag: "world"},
		},
		wantCfgs: []string{"hello", "world"},
		wantRevs: []string{"hello-00001", "hello-00002"},
	}, {
		name: "a target naming neither references nothing",
		spec: []servingv1.TrafficTarget{{LatestRevision: ptr.To(false), Percent: ptr.To[int64](100)}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfgs, revs := References(tt.spec)
			if diff := cmp.Diff(tt.wantCfgs, cfgs); diff != "" {
				t.Errorf("Configurations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRevs, revs); diff != "" {
				t.Errorf("Revisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActive(t *testing.T) {
	cfg := func(name, created string) *servingv1.Configuration {
		c := &servingv1.Configuration{}
		c.Name, c.Status.LatestCreatedRevisionName = name, created
		return c
	}
	snap := Snapshot{Configurations: map[string]*servingv1.Configuration{
		"hello": cfg("hello", "hello-00003"), "world": cfg("world", ""),
	}}
	follow := servingv1.TrafficTarget{ConfigurationName: "hello", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}
	served := []servingv1.TrafficTarget{{RevisionName: "hello-00001", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}
	tests := []struct {
		name           string
		spec, resolved []servingv1.TrafficTarget
		want           map[string]bool
	}{{
		name: "nothing routed yet: the latest created Revision starts active",
		spec: []servingv1.TrafficTarget{follow},
		want: map[string]bool{"hello-00003": true},
	}, {
		name:     "the one serving and the one starting; hello-00002, superseded before serving, is not active",
		spec:     []servingv1.TrafficTarget{follow},
		resolved: served,
		want:     map[string]bool{"hello-00001": true, "hello-00003": true},
	}, {
		name:     "a pinned target keeps only what it names",
		spec:     []servingv1.TrafficTarget{{RevisionName: "hello-00001", LatestRevision: ptr.To(false), Percent: ptr.To[int64](100)}},
		resolved: served,
		want:     map[string]bool{"hello-00001": true},
	}, {
		name: "a Configuration with no Revision yet, and one not found",
		spec: []servingv1.TrafficTarget{{ConfigurationName: "world"}, {ConfigurationName: "missing"}},
		want: map[string]bool{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Active(tt.spec, tt.resolved, snap)); diff != "" {
				t.Errorf("active (-want +got):\n%s", diff)
			}
		})
	}
}
