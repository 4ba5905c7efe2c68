package pullrequest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/canary"
	prmodel "github.com/knitops/knit/gitsync/pullrequest"
)

// strangersAsk is what an outside contributor writes to be merged at once.
const strangersAsk = "knit: canary 100 every 5s automerge max-5xx 100"

// promote runs one clean canary step of 100% on rig g.
func promote(t *testing.T, g *rig) *knitv1alpha1.PullRequest {
	t.Helper()
	if _, _, err := g.reconcile(t); err != nil {
		t.Fatal(err)
	}
	g.now = t0.Add(10 * time.Second)
	g.metrics["hello-abcdef0"], g.metrics["hello-pr-1-0123456"] = snap(100, 0), snap(100, 0)
	pr, _, err := g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// TestForkIsNeitherCanariedNorMerged: a fork's pull request asking for
// 100% at once with automerge and a 100-point 5xx allowance gets no
// traffic and no merge.
func TestForkIsNeitherCanariedNorMerged(t *testing.T) {
	g := newRigWith(t, strangersAsk, func(pr *knitv1alpha1.PullRequest) {
		pr.Annotations = map[string]string{prmodel.ForkAnnotation: "true"}
		pr.Spec.HeadCommit = head
	})
	pr := promote(t, g)
	if pr.Status.Canary != nil || pr.Status.Share != 0 {
		t.Errorf("canary %+v, share %d; want none for an unapproved fork", pr.Status.Canary, pr.Status.Share)
	}
	if g.forge.merged {
		t.Error("an unapproved fork was merged")
	}
}

// TestDescriptionCannotAutomerge: automerge and loose thresholds in the
// description are not honoured, even for the repository's own branches.
func TestDescriptionCannotAutomerge(t *testing.T) {
	g := newRigWith(t, "knit: canary 100 every 10s automerge max-5xx 100", func(pr *knitv1alpha1.PullRequest) { pr.Spec.HeadCommit = head })
	pr := promote(t, g)
	if pr.Status.Canary == nil || pr.Status.Canary.Phase != knitv1alpha1.CanaryPromoted {
		t.Fatalf("canary %+v, want promoted", pr.Status.Canary)
	}
	if g.forge.merged {
		t.Error("merged on the description's automerge")
	}
}

// TestApprovedForkMergesOnlyItsApprovedHead: with the labels, a fork's
// approved head is canaried and merged pinned to it; a head that moved
// after the analysis is not merged.
func TestApprovedForkMergesOnlyItsApprovedHead(t *testing.T) {
	approved := func(headCommit string) func(*knitv1alpha1.PullRequest) {
		return func(pr *knitv1alpha1.PullRequest) {
			pr.Annotations = map[string]string{prmodel.ForkAnnotation: "true", prmodel.ApprovedCommitAnnotation: head}
			pr.Spec.Labels, pr.Spec.HeadCommit = []string{"knit/canary: 100 every 10s", prmodel.DefaultApprovalLabel, prmodel.AutoMergeLabel}, headCommit
		}
	}
	g := newRigWith(t, strangersAsk, approved(head))
	if pr := promote(t, g); !g.forge.merged || g.forge.mergedSHA != head {
		t.Errorf("canary %+v, merged %v at %q; want merged at %s", pr.Status.Canary, g.forge.merged, g.forge.mergedSHA, head)
	}
	g = newRigWith(t, strangersAsk, approved("ffffffffffffffffffffffffffffffffffffffff"))
	promote(t, g)
	if g.forge.merged {
		t.Error("merged although the forge reported a newer head than the one analysed")
	}
}

func TestPlanFor(t *testing.T) {
	d := canary.DefaultThresholds()
	tests := []struct {
		name        string
		description string
		labels      []string
		fork        bool
		want        canary.Plan
		wantSource  canary.Source
	}{
		{"description cannot loosen", "knit: canary 10,50 every 1m max-5xx 100 max-p99 9x min-requests 1", nil, false,
			canary.Plan{Steps: []int64{10, 50}, Interval: time.Minute, Thresholds: d}, canary.SourceDescription},
		{"description may tighten", "knit: canary 10 every 1m max-5xx 0.5 min-requests 200", nil, false,
			canary.Plan{Steps: []int64{10}, Interval: time.Minute,
				Thresholds: canary.Thresholds{Max5xxPoints: 0.5, MaxP99Ratio: d.MaxP99Ratio, P99Slack: d.P99Slack, MinRequests: 200}}, canary.SourceDescription},
		{"automerge only from the label", "knit: canary 10 every 1m automerge", []string{prmodel.AutoMergeLabel}, false,
			canary.Plan{Steps: []int64{10}, Interval: time.Minute, AutoMerge: true, Thresholds: d}, canary.SourceDescription},
		{"a maintainer's label is taken as written", "", []string{"knit/canary: 100 every 10s max-5xx 5"}, false,
			canary.Plan{Steps: []int64{100}, Interval: 10 * time.Second,
				Thresholds: canary.Thresholds{Max5xxPoints: 5, MaxP99Ratio: d.MaxP99Ratio, P99Slack: d.P99Slack, MinRequests: d.MinRequests}}, canary.SourceLabel},
		{"a fork's description is not read", strangersAsk, nil, true, canary.Plan{}, canary.SourceNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pr := &knitv1alpha1.PullRequest{Spec: knitv1alpha1.PullRequestSpec{Description: tc.description, Labels: tc.labels}}
			if tc.fork {
				pr.Annotations = map[string]string{prmodel.ForkAnnotation: "true"}
			}
			got, src, err := planFor(pr)
			if err != nil {
				t.Fatal(err)
			}
			if src != tc.wantSource {
				t.Errorf("source %s, want %s", src, tc.wantSource)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
