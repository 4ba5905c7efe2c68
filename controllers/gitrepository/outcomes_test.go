package gitrepository

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// TestPreviewStatuses: a pass records each preview it made, deploying
// ones included, keeps the record of a pull request into a branch it did
// not sync, and drops the rest.
func TestPreviewStatuses(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	open := func(number int64, base string) knitv1alpha1.PullRequest {
		return knitv1alpha1.PullRequest{Spec: knitv1alpha1.PullRequestSpec{Number: number, BaseBranch: base, State: knitv1alpha1.PullRequestOpen}}
	}
	closed := open(6, "staging")
	closed.Spec.State = knitv1alpha1.PullRequestClosed
	repo := &knitv1alpha1.GitRepository{}
	repo.Status.Previews = []knitv1alpha1.PreviewStatus{
		{Number: 1, Phase: knitv1alpha1.PreviewFailed, Message: "an older head's"},
		{Number: 4, Commit: sha, Phase: knitv1alpha1.PreviewReady, RevisionNames: []string{"hello-staging-pr4-0123456"}},
		{Number: 5, Phase: knitv1alpha1.PreviewReady},
		{Number: 6, Phase: knitv1alpha1.PreviewReady},
	}
	p := &pass{repo: repo, failed: map[string]bool{"staging": true},
		prs: []knitv1alpha1.PullRequest{open(1, "main"), open(2, "main"), open(3, "main"), open(4, "staging"), open(5, "main"), closed},
		outcomes: map[int64]*previewOutcome{
			3: {commit: sha, revisions: []string{"hello-pr3-0123456"}, ready: true, baseService: "hello", canaryAnnotation: "10 every 1m"},
			2: {commit: sha, revisions: []string{"hello-pr2-0123456"}},
			1: {commit: sha, err: "render: bad YAML"},
		}}
	want := []knitv1alpha1.PreviewStatus{
		{Number: 1, Commit: sha, Phase: knitv1alpha1.PreviewFailed, Message: "render: bad YAML"},
		{Number: 2, Commit: sha, Phase: knitv1alpha1.PreviewDeploying, RevisionNames: []string{"hello-pr2-0123456"}},
		{Number: 3, Commit: sha, Phase: knitv1alpha1.PreviewReady, RevisionNames: []string{"hello-pr3-0123456"}, BaseService: "hello", CanaryAnnotation: "10 every 1m"},
		// staging did not sync: #4 keeps its record; #5 (main) made no
		// preview this pass and #6 is closed, so theirs go.
		repo.Status.Previews[1],
	}
	if got := p.previewStatuses(); !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("previews\n got %+v\nwant %+v", got, want)
	}
}
