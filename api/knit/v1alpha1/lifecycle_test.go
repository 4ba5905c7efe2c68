package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

type cond struct {
	Status          corev1.ConditionStatus
	Reason, Message string
}

func condOf(s *duckv1.Status, t duckv1.ConditionType) cond {
	c := s.GetCondition(t)
	if c == nil {
		return cond{}
	}
	return cond{c.Status, c.Reason, c.Message}
}

func TestGitRepositoryLifecycle(t *testing.T) {
	tests := []struct {
		name                         string
		mark                         func(*GitRepositoryStatus)
		fetched, synced, revs, ready cond
	}{{
		name:    "fresh",
		mark:    func(*GitRepositoryStatus) {},
		fetched: cond{Status: corev1.ConditionUnknown}, synced: cond{Status: corev1.ConditionUnknown},
		revs: cond{Status: corev1.ConditionUnknown}, ready: cond{Status: corev1.ConditionUnknown},
	}, {
		name:    "all done",
		mark:    func(gs *GitRepositoryStatus) { gs.MarkFetched(); gs.MarkSynced(); gs.MarkRevisionsReady() },
		fetched: cond{Status: corev1.ConditionTrue}, synced: cond{Status: corev1.ConditionTrue},
		revs: cond{Status: corev1.ConditionTrue}, ready: cond{Status: corev1.ConditionTrue},
	}, {
		name:    "fetch failed",
		mark:    func(gs *GitRepositoryStatus) { gs.MarkFetchFailed(ReasonCredentialsNotFound, "no Secret") },
		fetched: cond{corev1.ConditionFalse, ReasonCredentialsNotFound, "no Secret"}, synced: cond{Status: corev1.ConditionUnknown},
		revs: cond{Status: corev1.ConditionUnknown}, ready: cond{corev1.ConditionFalse, ReasonCredentialsNotFound, "no Secret"},
	}, {
		name: "building",
		mark: func(gs *GitRepositoryStatus) {
			gs.MarkFetched()
			gs.MarkBuilding("ko://app")
			gs.MarkRevisionsDeploying("waiting for hello")
		},
		fetched: cond{Status: corev1.ConditionTrue}, synced: cond{corev1.ConditionUnknown, ReasonBuilding, "ko://app"},
		revs: cond{corev1.ConditionUnknown, ReasonDeploying, "waiting for hello"}, ready: cond{corev1.ConditionUnknown, ReasonBuilding, "ko://app"},
	}, {
		name: "commit rejected, Revisions failed",
		mark: func(gs *GitRepositoryStatus) {
			gs.MarkFetched()
			gs.MarkSyncFailed(ReasonCommitRejected, "bad YAML")
			gs.MarkRevisionsFailed("exit 1")
		},
		fetched: cond{Status: corev1.ConditionTrue}, synced: cond{corev1.ConditionFalse, ReasonCommitRejected, "bad YAML"},
		revs: cond{corev1.ConditionFalse, ReasonRevisionFailed, "exit 1"}, ready: cond{corev1.ConditionFalse, ReasonCommitRejected, "bad YAML"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gs := &GitRepositoryStatus{}
			gs.InitializeConditions()
			tc.mark(gs)
			got := []cond{condOf(&gs.Status, GitRepositoryConditionFetched), condOf(&gs.Status, GitRepositoryConditionSynced),
				condOf(&gs.Status, GitRepositoryConditionRevisionsReady), condOf(&gs.Status, duckv1.ConditionReady)}
			if diff := cmp.Diff([]cond{tc.fetched, tc.synced, tc.revs, tc.ready}, got); diff != "" {
				t.Errorf("Fetched, Synced, RevisionsReady, Ready (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPullRequestLifecycle(t *testing.T) {
	tests := []struct {
		name      string
		mark      func(*PullRequestStatus)
		condition duckv1.ConditionType
		want      cond
	}{
		{"base not tracked", func(ps *PullRequestStatus) { ps.MarkBaseNotTracked("dev") }, duckv1.ConditionReady,
			cond{corev1.ConditionFalse, ReasonBaseNotTracked, `base branch "dev" is not one of the repository's tracked branches`}},
		{"preview failed", func(ps *PullRequestStatus) { ps.MarkPreviewFailed("bad YAML") }, duckv1.ConditionReady, cond{corev1.ConditionFalse, ReasonPreviewFailed, "bad YAML"}},
		{"preview deploying", func(ps *PullRequestStatus) { ps.MarkPreviewDeploying() }, duckv1.ConditionReady,
			cond{corev1.ConditionUnknown, ReasonDeploying, "waiting for the head's Revision to become ready and routed"}},
		{"preview ready", func(ps *PullRequestStatus) { ps.MarkPreviewReady() }, duckv1.ConditionReady, cond{Status: corev1.ConditionTrue}},
		{"closed", func(ps *PullRequestStatus) { ps.MarkDone(false) }, duckv1.ConditionReady,
			cond{corev1.ConditionTrue, ReasonClosed, "the preview and its traffic are removed"}},
		{"merged", func(ps *PullRequestStatus) { ps.MarkDone(true) }, duckv1.ConditionReady,
			cond{corev1.ConditionTrue, ReasonMerged, "the preview and its traffic are removed"}},
		{"invalid plan", func(ps *PullRequestStatus) { ps.MarkCanaryInvalid("steps") }, PullRequestConditionCanary, cond{corev1.ConditionFalse, ReasonInvalidPlan, "steps"}},
		{"canary step", func(ps *PullRequestStatus) { ps.MarkCanaryProgressing("step 1 of 3") }, PullRequestConditionCanary,
			cond{corev1.ConditionUnknown, ReasonProgressing, "step 1 of 3"}},
		{"promoted", func(ps *PullRequestStatus) { ps.MarkCanaryPromoted("passed") }, PullRequestConditionCanary, cond{corev1.ConditionTrue, ReasonPromoted, "passed"}},
		{"rolled back", func(ps *PullRequestStatus) { ps.MarkCanaryRolledBack("5xx") }, PullRequestConditionCanary, cond{corev1.ConditionFalse, ReasonRolledBack, "5xx"}},
		{"forge told", func(ps *PullRequestStatus) { ps.MarkForgeReported() }, PullRequestConditionForgeReported, cond{Status: corev1.ConditionTrue}},
		{"forge not told", func(ps *PullRequestStatus) { ps.MarkForgeNotReported(ReasonForgeError, "503") }, PullRequestConditionForgeReported,
			cond{corev1.ConditionFalse, ReasonForgeError, "503"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := &PullRequestStatus{}
			tc.mark(ps)
			if diff := cmp.Diff(tc.want, condOf(&ps.Status, tc.condition)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.condition, diff)
			}
		})
	}
}
