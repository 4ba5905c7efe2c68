package rollout

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func latest(percent int64) servingv1.TrafficTarget {
	return servingv1.TrafficTarget{LatestRevision: ptr.To(true), Percent: ptr.To(percent)}
}

func pinned(name string, percent int64) servingv1.TrafficTarget {
	return servingv1.TrafficTarget{RevisionName: name, LatestRevision: ptr.To(false), Percent: ptr.To(percent)}
}

func at(phase knitv1alpha1.CanaryPhase, percent int64) *knitv1alpha1.RolloutStatus {
	r := waitingFor("hello-c2", "hello-c1")
	r.Phase, r.Percent = phase, percent
	return r
}

func TestTraffic(t *testing.T) {
	tagged := servingv1.TrafficTarget{Tag: "latest", LatestRevision: ptr.To(true), Percent: ptr.To[int64](0)}
	tests := []struct {
		name    string
		git     []servingv1.TrafficTarget
		r       *knitv1alpha1.RolloutStatus
		want    []servingv1.TrafficTarget
		wantErr error
	}{
		{"no rollout: Git's traffic", nil, nil, nil, nil},
		{"promoted: Git's traffic", []servingv1.TrafficTarget{latest(100)}, at(knitv1alpha1.CanaryPromoted, 50), []servingv1.TrafficTarget{latest(100)}, nil},
		{"waiting: all to the stable", nil, at(knitv1alpha1.CanaryProgressing, 0), []servingv1.TrafficTarget{pinned("hello-c1", 100)}, nil},
		{"a step: its percent to the candidate", nil, at(knitv1alpha1.CanaryProgressing, 10),
			[]servingv1.TrafficTarget{pinned("hello-c1", 90), pinned("hello-c2", 10)}, nil},
		{"a step of 100%: the stable keeps a 0% target", nil, at(knitv1alpha1.CanaryProgressing, 100),
			[]servingv1.TrafficTarget{pinned("hello-c1", 0), pinned("hello-c2", 100)}, nil},
		{"rolled back: all to the stable, the candidate off", []servingv1.TrafficTarget{latest(100)}, at(knitv1alpha1.CanaryRolledBack, 0),
			[]servingv1.TrafficTarget{pinned("hello-c1", 100)}, nil},
		{"tag-only targets stay", []servingv1.TrafficTarget{latest(100), tagged}, at(knitv1alpha1.CanaryProgressing, 50),
			[]servingv1.TrafficTarget{pinned("hello-c1", 50), pinned("hello-c2", 50), tagged}, nil},
		{"a hand-written split is refused", []servingv1.TrafficTarget{latest(80), pinned("hello-c0", 20)}, at(knitv1alpha1.CanaryProgressing, 10), nil, ErrTrafficDeclared},
		{"a pinned 100% is refused", []servingv1.TrafficTarget{pinned("hello-c0", 100)}, at(knitv1alpha1.CanaryProgressing, 10), nil, ErrTrafficDeclared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Traffic(tt.git, tt.r)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Traffic (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckRefusesAHandWrittenSplitWithoutARollout(t *testing.T) {
	if _, err := Traffic([]servingv1.TrafficTarget{latest(90), pinned("hello-c0", 10)}, nil); !errors.Is(err, ErrTrafficDeclared) {
		t.Errorf("err = %v, want ErrTrafficDeclared before any rollout runs", err)
	}
	if _, err := Traffic([]servingv1.TrafficTarget{latest(100), {Tag: "x", RevisionName: "hello-c0", Percent: ptr.To[int64](0)}}, nil); err != nil {
		t.Errorf("err = %v for all to the latest and a tag", err)
	}
}
