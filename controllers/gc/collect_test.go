package gc

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/route"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// rev is a Revision created ageH hours ago, last active idleH hours ago
// (idleH < 0: never routed), in the given routing state.
func rev(name string, ageH, idleH int, state string) servingv1.Revision {
	r := servingv1.Revision{ObjectMeta: metav1.ObjectMeta{
		Name:              name,
		CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(ageH) * time.Hour)),
		Labels:            map[string]string{},
		Annotations:       map[string]string{},
	}}
	if state != "" {
		r.Labels["serving.knative.dev/routingState"] = state
	}
	if idleH >= 0 {
		r.Annotations[route.RoutingStateModifiedAnnotation] = now.Add(-time.Duration(idleH) * time.Hour).Format(time.RFC3339)
	}
	return r
}

func TestCollect(t *testing.T) {
	knative := &config.GC{RetainSinceCreateTime: 48 * time.Hour, RetainSinceLastActiveTime: 15 * time.Hour, MinNonActiveRevisions: 1, MaxNonActiveRevisions: 1000}
	cfg := &servingv1.Configuration{Status: servingv1.ConfigurationStatus{ConfigurationStatusFields: servingv1.ConfigurationStatusFields{
		LatestCreatedRevisionName: "latest", LatestReadyRevisionName: "ready",
	}}}
	tests := []struct {
		name        string
		gc          *config.GC
		revs        []servingv1.Revision
		want        []string
		wantRecheck time.Duration
	}{{
		name: "old and idle beyond the minimum is collected",
		gc:   knative,
		revs: []servingv1.Revision{rev("newer", 100, 20, "reserve"), rev("older", 100, 30, "reserve")},
		want: []string{"older"},
	}, {
		name:        "young revisions wait; recheck when the first turns stale",
		gc:          &config.GC{RetainSinceCreateTime: 48 * time.Hour, RetainSinceLastActiveTime: 15 * time.Hour, MinNonActiveRevisions: 0, MaxNonActiveRevisions: 1000},
		revs:        []servingv1.Revision{rev("young", 40, 20, "reserve")},
		wantRecheck: 8 * time.Hour,
	}, {
		name: "routed, latest created and latest ready are never collected",
		gc:   &config.GC{RetainSinceCreateTime: 0, RetainSinceLastActiveTime: 0, MinNonActiveRevisions: 0, MaxNonActiveRevisions: 0},
		revs: []servingv1.Revision{rev("routed", 999, 999, "active"), rev("latest", 999, 999, ""), rev("ready", 999, 999, "reserve"), rev("idle", 999, 999, "reserve")},
		want: []string{"idle"},
	}, {
		name: "max-non-active caps young revisions too, oldest activity first",
		gc:   &config.GC{RetainSinceCreateTime: 48 * time.Hour, RetainSinceLastActiveTime: 15 * time.Hour, MinNonActiveRevisions: 0, MaxNonActiveRevisions: 2},
		revs: []servingv1.Revision{rev("a", 1, 1, "reserve"), rev("b", 1, 2, "reserve"), rev("c", 1, 3, "reserve")},
		want: []string{"c"}, wantRecheck: 47 * time.Hour,
	}, {
		name: "everything disabled keeps everything",
		gc:   &config.GC{RetainSinceCreateTime: config.Disabled, RetainSinceLastActiveTime: config.Disabled, MinNonActiveRevisions: 0, MaxNonActiveRevisions: -1},
		revs: []servingv1.Revision{rev("a", 999, 999, "reserve")},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, recheck := Collect(cfg, tc.revs, tc.gc, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("deletions (-want +got):\n%s", diff)
			}
			if recheck != tc.wantRecheck {
				t.Errorf("recheck = %v, want %v", recheck, tc.wantRecheck)
			}
		})
	}
}
