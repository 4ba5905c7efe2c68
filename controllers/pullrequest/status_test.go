package pullrequest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
	"github.com/knitops/knit/gitsync/stepper"
)

// TestMarkOpen: an open pull request's status is what its repository
// recorded of its preview, served where the base Service routes its tag.
func TestMarkOpen(t *testing.T) {
	const url = "http://pr-1-hello.default.localhost"
	routed := &servingv1.Service{}
	routed.Status.Traffic = []servingv1.TrafficTarget{{RevisionName: "hello-abcdef0"}, {Tag: "pr-1", RevisionName: "hello-pr1-0123456", URL: url}}
	unrouted := &servingv1.Service{}
	unrouted.Status.Traffic = []servingv1.TrafficTarget{{RevisionName: "hello-abcdef0"}}
	ready := knitv1alpha1.PreviewStatus{Number: 1, Commit: head, Phase: knitv1alpha1.PreviewReady,
		RevisionNames: []string{"hello-pr1-0123456", "worker-pr1-0123456"}, BaseService: "hello", CanaryAnnotation: "10,50 every 1m"}
	with := func(change func(*knitv1alpha1.PreviewStatus)) *knitv1alpha1.PreviewStatus {
		p := ready
		change(&p)
		return &p
	}
	addsOnly := &knitv1alpha1.PreviewStatus{Number: 1, Commit: head, Phase: knitv1alpha1.PreviewReady, Services: []string{"api-pr-1"}}
	tests := []struct {
		name     string
		branches []string // spec.branches of the repository
		base     string   // the pull request's base branch
		preview  *knitv1alpha1.PreviewStatus
		// baseError is the base branch's sync error in the repository.
		baseError string
		svc       *servingv1.Service
		// services are the preview Services that exist.
		services []*servingv1.Service
		// stale is what an earlier status said of the preview.
		stale  bool
		ready  corev1.ConditionStatus
		reason string
		url    string
	}{
		{name: "ready and routed", preview: &ready, svc: routed, ready: corev1.ConditionTrue, url: url},
		{name: "ready, its route not programmed yet", preview: &ready, svc: unrouted, ready: corev1.ConditionUnknown, reason: knitv1alpha1.ReasonDeploying},
		{name: "ready, no base Service yet", preview: &ready, ready: corev1.ConditionUnknown, reason: knitv1alpha1.ReasonDeploying},
		{name: "deploying (builds running)", preview: with(func(p *knitv1alpha1.PreviewStatus) { p.Phase = knitv1alpha1.PreviewDeploying }),
			svc: routed, ready: corev1.ConditionUnknown, reason: knitv1alpha1.ReasonDeploying, url: url},
		{name: "failed", preview: with(func(p *knitv1alpha1.PreviewStatus) {
			p.Phase, p.Message = knitv1alpha1.PreviewFailed, "render: bad YAML"
		}),
			svc: routed, ready: corev1.ConditionFalse, reason: knitv1alpha1.ReasonPreviewFailed, url: url},
		{name: "a head that only adds a Service serves at its preview Service's URL", preview: addsOnly, svc: unrouted,
			services: []*servingv1.Service{previewService(corev1.ConditionTrue)}, ready: corev1.ConditionTrue, url: "http://api-pr-1.default.localhost"},
		{name: "a preview Service not ready yet", preview: addsOnly, services: []*servingv1.Service{previewService(corev1.ConditionUnknown)},
			ready: corev1.ConditionUnknown, reason: knitv1alpha1.ReasonDeploying, url: "http://api-pr-1.default.localhost"},
		{name: "a preview Service not created yet", preview: addsOnly, ready: corev1.ConditionUnknown, reason: knitv1alpha1.ReasonDeploying},
		{name: "a preview Service that failed fails the preview", preview: addsOnly, services: []*servingv1.Service{previewService(corev1.ConditionFalse)},
			ready: corev1.ConditionFalse, reason: knitv1alpha1.ReasonPreviewFailed, url: "http://api-pr-1.default.localhost"},
		{name: "beside tagged Revisions, the tag's URL wins", preview: with(func(p *knitv1alpha1.PreviewStatus) { p.Services = []string{"api-pr-1"} }),
			svc: routed, services: []*servingv1.Service{previewService(corev1.ConditionTrue)}, ready: corev1.ConditionTrue, url: url},
		{name: "base not tracked", base: "develop", stale: true, ready: corev1.ConditionFalse, reason: knitv1alpha1.ReasonBaseNotTracked},
		{name: "base tracked among spec.branches, no pass yet", branches: []string{"main", "develop"}, base: "develop", stale: true,
			ready: corev1.ConditionUnknown, reason: knitv1alpha1.ReasonDeploying},
		{name: "base branch did not sync", baseError: "kustomize: no such file", stale: true,
			ready: corev1.ConditionFalse, reason: knitv1alpha1.ReasonPreviewFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := &knitv1alpha1.GitRepository{Spec: knitv1alpha1.GitRepositorySpec{Branches: tc.branches}}
			if tc.preview != nil {
				repo.Status.Previews = []knitv1alpha1.PreviewStatus{{Number: 2}, *tc.preview}
			}
			repo.Status.Branches = []knitv1alpha1.BranchStatus{{Name: "main", Error: tc.baseError}}
			pr := &knitv1alpha1.PullRequest{Spec: knitv1alpha1.PullRequestSpec{Number: 1, BaseBranch: "main"}}
			if tc.base != "" {
				pr.Spec.BaseBranch = tc.base
			}
			if tc.stale {
				pr.Status.RevisionName, pr.Status.URL, pr.Status.BaseService = "hello-pr1-fedcba9", url, "hello"
			}
			markOpen(pr, repo, tc.svc, tc.services)
			s := pr.Status
			c := s.GetCondition(duckv1.ConditionReady)
			if c == nil || c.Status != tc.ready || tc.reason != "" && c.Reason != tc.reason {
				t.Fatalf("Ready = %+v, want %s %s", c, tc.ready, tc.reason)
			}
			if s.Tag != "pr-1" || s.URL != tc.url {
				t.Errorf("tag %q url %q, want pr-1 and %q", s.Tag, s.URL, tc.url)
			}
			if tc.preview == nil {
				if s.RevisionName != "" || s.BaseService != "" {
					t.Errorf("without a preview: revision %q base %q, want none", s.RevisionName, s.BaseService)
				}
				return
			}
			if len(tc.preview.RevisionNames) > 0 && (s.RevisionName != "hello-pr1-0123456" || s.BaseService != "hello" || s.CanaryAnnotation != "10,50 every 1m") {
				t.Errorf("revision %q base %q annotation %q, want the first preview's", s.RevisionName, s.BaseService, s.CanaryAnnotation)
			}
			if tc.preview.Phase == knitv1alpha1.PreviewFailed && c.Message != "render: bad YAML" {
				t.Errorf("failure message %q, want the repository's", c.Message)
			}
		})
	}
}

// previewService is preview Service api-pr-1 with its Ready condition.
func previewService(ready corev1.ConditionStatus) *servingv1.Service {
	svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api-pr-1", Generation: 1}}
	svc.Status.ObservedGeneration, svc.Status.URL = 1, "http://api-pr-1.default.localhost"
	svc.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: ready, Reason: "Test", Message: "the app exited"}}
	return svc
}

func TestMarkDone(t *testing.T) {
	for state, reason := range map[knitv1alpha1.PullRequestState]string{knitv1alpha1.PullRequestMerged: "Merged", knitv1alpha1.PullRequestClosed: "Closed"} {
		pr := &knitv1alpha1.PullRequest{Spec: knitv1alpha1.PullRequestSpec{Number: 1, State: state}}
		pr.Status.Tag, pr.Status.URL, pr.Status.RevisionName, pr.Status.Share = "pr-1", "http://pr-1", "hello-pr1-0123456", 20
		markDone(pr)
		c := pr.Status.GetCondition(duckv1.ConditionReady)
		if !c.IsTrue() || c.Reason != reason || pr.Status.Tag != "" || pr.Status.URL != "" || pr.Status.RevisionName != "" || pr.Status.Share != 0 {
			t.Errorf("%s: status %+v, want Ready %s and the preview cleared", state, pr.Status, reason)
		}
	}
}

func TestHeadOf(t *testing.T) {
	repo := &knitv1alpha1.GitRepository{}
	repo.Status.Previews = []knitv1alpha1.PreviewStatus{{Number: 1, Commit: head}, {Number: 2}}
	tests := []struct {
		number int64
		want   string
	}{
		{1, head},       // what the preview was made from, even if the forge moved on
		{2, "reported"}, // the head could not be read
		{3, "reported"}, // no pass yet
	}
	for _, tc := range tests {
		pr := &knitv1alpha1.PullRequest{Spec: knitv1alpha1.PullRequestSpec{Number: tc.number, HeadCommit: "reported"}}
		if got := headOf(pr, repo); got != tc.want {
			t.Errorf("headOf(#%d) = %q, want %q", tc.number, got, tc.want)
		}
	}
}

// TestReconcileWritesThePreviewStatus: the status follows the
// repository's record and the base's routes, and a closed pull request is
// marked done, all by this reconciler.
func TestReconcileWritesThePreviewStatus(t *testing.T) {
	g := newRig(t, "")
	pr, _, err := g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Status.GetCondition(duckv1.ConditionReady).IsTrue() || pr.Status.URL != "http://pr-1-hello.default.localhost" ||
		pr.Status.RevisionName != "hello-pr-1-0123456" || pr.Status.ObservedGeneration != pr.Generation {
		t.Fatalf("status %+v, want Ready at the tag's URL", pr.Status)
	}

	ctx := context.Background()
	repo := &knitv1alpha1.GitRepository{}
	if err := g.c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "hello"}, repo); err != nil {
		t.Fatal(err)
	}
	repo.Status.Previews[0].Phase, repo.Status.Previews[0].Message = knitv1alpha1.PreviewFailed, "preview Revision hello-pr-1-0123456 failed: OOMKilled"
	if err := g.c.Update(ctx, repo); err != nil {
		t.Fatal(err)
	}
	pr, _, err = g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	if c := pr.Status.GetCondition(duckv1.ConditionReady); !c.IsFalse() || c.Message != repo.Status.Previews[0].Message {
		t.Errorf("Ready = %+v, want False with the repository's reason", c)
	}

	pr.Spec.State = knitv1alpha1.PullRequestMerged
	if err := g.c.Update(ctx, pr); err != nil {
		t.Fatal(err)
	}
	pr, _, err = g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	if c := pr.Status.GetCondition(duckv1.ConditionReady); !c.IsTrue() || c.Reason != "Merged" || pr.Status.Tag != "" || pr.Status.URL != "" {
		t.Errorf("status %+v, want merged and the preview cleared", pr.Status)
	}
}

// TestRestartKeepsThePreview: a reconciler started afresh (no memory of
// anything) says what the last one said, from the persisted record.
func TestRestartKeepsThePreview(t *testing.T) {
	g := newRig(t, "")
	before, _, err := g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	g.r = &Reconciler{client: g.c, forges: g.r.forges, metrics: g.r.metrics, now: g.r.now, windows: stepper.NewWindows[types.NamespacedName]()}
	after, _, err := g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Status.GetCondition(duckv1.ConditionReady).IsTrue() || after.Status.URL != before.Status.URL || after.ResourceVersion != before.ResourceVersion {
		t.Errorf("after a restart: %+v (rv %s → %s), want the same Ready status, unwritten", after.Status, before.ResourceVersion, after.ResourceVersion)
	}
}

// TestPullRequestsOfService: a Service's routes wake the open pull
// requests into its branch only.
func TestPullRequestsOfService(t *testing.T) {
	g := newRig(t, "")
	ctx := context.Background()
	for _, pr := range []*knitv1alpha1.PullRequest{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-2"},
			Spec: knitv1alpha1.PullRequestSpec{Repository: "hello", Number: 2, HeadBranch: "b", BaseBranch: "staging"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-3"},
			Spec: knitv1alpha1.PullRequestSpec{Repository: "hello", Number: 3, HeadBranch: "c", BaseBranch: "main", State: knitv1alpha1.PullRequestClosed}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other-1"},
			Spec: knitv1alpha1.PullRequestSpec{Repository: "other", Number: 1, HeadBranch: "d", BaseBranch: "main"}},
	} {
		if err := g.c.Create(ctx, pr); err != nil {
			t.Fatal(err)
		}
	}
	svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello",
		Labels: map[string]string{plan.RepositoryLabel: "hello", plan.BranchLabel: "main"}}}
	got := g.r.pullRequestsOfService(ctx, svc)
	if len(got) != 1 || got[0].Name != "hello-1" {
		t.Errorf("Service hello of main wakes %v, want hello-1 alone", got)
	}
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}}
	if got := g.r.pullRequestsOfRepository(ctx, repo); len(got) != 2 {
		t.Errorf("GitRepository hello wakes %v, want its two open pull requests", got)
	}
}
