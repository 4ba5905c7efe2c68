package gitrepository

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	prmodel "github.com/knitops/knit/gitsync/pullrequest"
)

// TestUntrustedPreviews: a fork's pull request is previewed only from
// the forge's pull ref, at the commit the forge reported, once that
// commit is approved; the repository's own branches as before.
func TestUntrustedPreviews(t *testing.T) {
	const a, b = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{prmodel.ApprovalLabelAnnotation: "ok-to-deploy"}}}
	fork := func(head, commit, approved string) *knitv1alpha1.PullRequest {
		pr := &knitv1alpha1.PullRequest{Spec: knitv1alpha1.PullRequestSpec{HeadBranch: head, HeadCommit: commit}}
		pr.Annotations = map[string]string{prmodel.ForkAnnotation: "true"}
		if approved != "" {
			pr.Annotations[prmodel.ApprovedCommitAnnotation] = approved
		}
		return pr
	}
	tests := []struct {
		name string
		pr   *knitv1alpha1.PullRequest
		sha  string
		want string // substring of the refusal; "" previews
	}{
		{"own branch", &knitv1alpha1.PullRequest{Spec: knitv1alpha1.PullRequestSpec{HeadBranch: "main", HeadCommit: b}}, a, ""},
		{"fork by branch name", fork("main", a, a), a, "not the forge's pull ref"},
		{"fork not approved", fork("refs/pull/7/head", a, ""), a, `"ok-to-deploy" label`},
		{"fork approved for an older head", fork("refs/pull/7/head", b, a), b, "waiting for a maintainer"},
		{"pull ref ahead of the event", fork("refs/pull/7/head", a, a), b, "the forge reported"},
		{"fork approved", fork("refs/pull/7/head", a, a), a, ""},
	}
	for _, tc := range tests {
		got := untrusted(repo, tc.pr, tc.sha)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: untrusted = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestHeadName(t *testing.T) {
	for head, want := range map[string]string{"feature": "feature", "refs/pull/7/head": "pull-7-head", "refs/merge-requests/7/head": "pull-7-head"} {
		pr := &knitv1alpha1.PullRequest{Spec: knitv1alpha1.PullRequestSpec{Number: 7, HeadBranch: head}}
		if got := headName(pr); got != want {
			t.Errorf("headName(%s) = %s, want %s", head, got, want)
		}
	}
}
