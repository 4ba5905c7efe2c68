package pullrequest

import (
	"testing"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/forge"
)

func TestStateOf(t *testing.T) {
	tests := []struct {
		action forge.Action
		merged bool
		want   knitv1alpha1.PullRequestState
	}{
		{forge.ActionOpened, false, knitv1alpha1.PullRequestOpen},
		{forge.ActionSynchronize, false, knitv1alpha1.PullRequestOpen},
		{forge.ActionReopened, false, knitv1alpha1.PullRequestOpen},
		{forge.ActionClosed, true, knitv1alpha1.PullRequestMerged},
		{forge.ActionClosed, false, knitv1alpha1.PullRequestClosed},
	}
	for _, tt := range tests {
		if got := StateOf(tt.action, tt.merged); got != tt.want {
			t.Errorf("StateOf(%s, %v) = %s, want %s", tt.action, tt.merged, got, tt.want)
		}
	}
}

func TestNextNumber(t *testing.T) {
	pr := func(repo string, n int64) knitv1alpha1.PullRequest {
		return knitv1alpha1.PullRequest{Spec: knitv1alpha1.PullRequestSpec{Repository: repo, Number: n}}
	}
	prs := []knitv1alpha1.PullRequest{pr("hello", 1), pr("hello", 7), pr("other", 40)}
	if got := NextNumber(prs, "hello"); got != 8 {
		t.Errorf("next for hello = %d, want 8", got)
	}
	if got := NextNumber(prs, "new"); got != 1 {
		t.Errorf("next for a repository without pull requests = %d, want 1", got)
	}
	if Name("hello", 3) != "hello-3" {
		t.Errorf("Name = %s", Name("hello", 3))
	}
}
