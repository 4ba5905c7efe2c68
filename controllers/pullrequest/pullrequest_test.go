package pullrequest

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/api"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/canary"
	"github.com/knitops/knit/gitsync/forgeapi"
	"github.com/knitops/knit/gitsync/stepper"
)

const head = "0123456789abcdef0123456789abcdef01234567"

// recordingForge is a forge that remembers what it was told and can fail.
type recordingForge struct {
	statuses []forgeapi.Status
	comments []string
	merged   bool
	// mergedSHA is the head the last merge was pinned to.
	mergedSHA string
	err       error
}

func (f *recordingForge) SetStatus(_ context.Context, sha string, s forgeapi.Status) error {
	if f.err != nil {
		return f.err
	}
	f.statuses = append(f.statuses, s)
	return nil
}

func (f *recordingForge) UpsertComment(_ context.Context, _ int64, _, body string) error {
	if f.err != nil {
		return f.err
	}
	f.comments = append(f.comments, body)
	return nil
}

func (f *recordingForge) Merge(_ context.Context, _ int64, sha string) error {
	f.merged, f.mergedSHA = true, sha
	return f.err
}

type recordingAnnouncer struct{ failed []string }

func (a *recordingAnnouncer) CanaryFailed(_ context.Context, _ *knitv1alpha1.PullRequest, commit, _, reason string) {
	a.failed = append(a.failed, commit+": "+reason)
}

// world is a pull request whose preview of head is ready, as its
// repository on a forge recorded it, and the base Service's stable
// revision and routes.
func world(t *testing.T, description string) client.Client {
	t.Helper()
	return worldWith(t, description, nil)
}

// worldWith is world with the pull request changed by mutate (when set).
func worldWith(t *testing.T, description string, mutate func(*knitv1alpha1.PullRequest)) client.Client {
	t.Helper()
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	pr := &knitv1alpha1.PullRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-1"},
		Spec: knitv1alpha1.PullRequestSpec{Repository: "hello", Number: 1, HeadBranch: "good", BaseBranch: "main",
			State: knitv1alpha1.PullRequestOpen, Description: description},
	}
	if mutate != nil {
		mutate(pr)
	}
	svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}}
	svc.Status.LatestReadyRevisionName = "hello-abcdef0"
	svc.Status.Traffic = []servingv1.TrafficTarget{{RevisionName: "hello-abcdef0"},
		{Tag: "pr-1", RevisionName: "hello-pr-1-0123456", URL: "http://pr-1-hello.default.localhost"}}
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"},
		Spec: knitv1alpha1.GitRepositorySpec{URL: "http://forge/ada/hello.git", Provider: knitv1alpha1.GitProviderGitea}}
	repo.Status.Previews = []knitv1alpha1.PreviewStatus{{Number: 1, Commit: head, Phase: knitv1alpha1.PreviewReady,
		RevisionNames: []string{"hello-pr-1-0123456"}, BaseService: "hello"}}
	objs := []client.Object{pr, svc, repo}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&knitv1alpha1.PullRequest{}).
		WithIndex(&knitv1alpha1.PullRequest{}, repositoryIndex, repositoryOf).Build()
}

// snap is a window's counters: requests, of them 5xx, all answered within 5 ms.
func snap(requests, errs float64) canary.Snapshot {
	return canary.Snapshot{Requests: requests, Errors5xx: errs,
		Buckets: []canary.Bucket{{UpperBound: 0.005, Count: requests}, {UpperBound: math.Inf(1), Count: requests}}}
}

type rig struct {
	r         *Reconciler
	c         client.Client
	forge     *recordingForge
	announcer *recordingAnnouncer
	now       time.Time
	metrics   map[string]canary.Snapshot // by revision
}

func newRig(t *testing.T, description string) *rig {
	return newRigWith(t, description, nil)
}

func newRigWith(t *testing.T, description string, mutate func(*knitv1alpha1.PullRequest)) *rig {
	g := &rig{c: worldWith(t, description, mutate), forge: &recordingForge{}, announcer: &recordingAnnouncer{}, now: t0,
		metrics: map[string]canary.Snapshot{"hello-abcdef0": snap(0, 0), "hello-pr-1-0123456": snap(0, 0)}}
	g.r = &Reconciler{
		client: g.c,
		forges: func(context.Context, *knitv1alpha1.GitRepository) (Forge, error) { return g.forge, nil },
		metrics: func(_ context.Context, _, rev string) (map[string]canary.Snapshot, error) {
			return map[string]canary.Snapshot{"r": g.metrics[rev]}, nil
		},
		announcer: g.announcer,
		now:       func() time.Time { return g.now },
		windows:   stepper.NewWindows[types.NamespacedName](),
	}
	return g
}

func (g *rig) reconcile(t *testing.T) (*knitv1alpha1.PullRequest, ctrl.Result, error) {
	t.Helper()
	res, err := g.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "hello-1"}})
	pr := &knitv1alpha1.PullRequest{}
	if gerr := g.c.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "hello-1"}, pr); gerr != nil {
		t.Fatal(gerr)
	}
	return pr, res, err
}

func TestReconcileTellsTheForgeOnce(t *testing.T) {
	g := newRig(t, "")
	pr, _, err := g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.forge.statuses) != 1 || g.forge.statuses[0].Context != PreviewContext || g.forge.statuses[0].State != forgeapi.StateSuccess ||
		g.forge.statuses[0].TargetURL != "http://pr-1-hello.default.localhost" {
		t.Errorf("statuses = %+v, want one knit/preview success pointing at the preview", g.forge.statuses)
	}
	if len(g.forge.comments) != 1 || !strings.Contains(g.forge.comments[0], head) {
		t.Errorf("comments = %q, want one naming the commit", g.forge.comments)
	}
	if c := pr.Status.GetCondition(knitv1alpha1.PullRequestConditionForgeReported); !c.IsTrue() {
		t.Errorf("ForgeReported = %+v, want True", c)
	}
	if _, _, err := g.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if len(g.forge.statuses) != 1 || len(g.forge.comments) != 1 {
		t.Errorf("a resync told the forge again: %d statuses, %d comments", len(g.forge.statuses), len(g.forge.comments))
	}
}

func TestReconcileSurfacesForgeErrorsAndRetries(t *testing.T) {
	g := newRig(t, "")
	g.forge.err = &forgeapi.APIError{Status: 502, Message: "bad gateway"}
	pr, _, err := g.reconcile(t)
	if err == nil {
		t.Fatal("a forge error returned nil: it would not be retried")
	}
	c := pr.Status.GetCondition(knitv1alpha1.PullRequestConditionForgeReported)
	if !c.IsFalse() || c.Reason != "ForgeError" || !strings.Contains(c.Message, "HTTP 502") || strings.Contains(c.Message, "bad gateway") {
		t.Errorf("ForgeReported = %+v, want False ForgeError with the status in knit's words, not the forge's answer", c)
	}
	if ready := pr.Status.GetCondition(duckv1.ConditionReady); !ready.IsTrue() {
		t.Errorf("Ready = %+v: a forge outage must not touch the preview", ready)
	}
	g.forge.err = nil
	if _, _, err := g.reconcile(t); err != nil || len(g.forge.statuses) != 1 {
		t.Errorf("after the forge recovered: err %v, statuses %+v", err, g.forge.statuses)
	}
}

// A canary of a head that only adds Services has no base traffic to
// step: its plan is refused, saying why, and the preview stays Ready.
func TestCanaryOfAHeadThatOnlyAddsServicesIsInvalid(t *testing.T) {
	g := newRig(t, "knit: canary 20,50 every 10s")
	repo := &knitv1alpha1.GitRepository{}
	if err := g.c.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "hello"}, repo); err != nil {
		t.Fatal(err)
	}
	repo.Status.Previews = []knitv1alpha1.PreviewStatus{{Number: 1, Commit: head, Phase: knitv1alpha1.PreviewReady, Services: []string{"api-pr-1"}}}
	if err := g.c.Update(context.Background(), repo); err != nil { // no status subresource in this fake
		t.Fatal(err)
	}
	pr, _, err := g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	c := pr.Status.GetCondition(knitv1alpha1.PullRequestConditionCanary)
	if pr.Status.Canary == nil || pr.Status.Canary.Phase != knitv1alpha1.CanaryInvalid || !c.IsFalse() || !strings.Contains(c.Message, "only adds Services") {
		t.Errorf("canary %+v, condition %+v; want Invalid saying the head only adds Services", pr.Status.Canary, c)
	}
}

func TestReconcileRunsTheCanary(t *testing.T) {
	g := newRig(t, "knit: canary 20,50 every 10s")
	pr, res, err := g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	if c := pr.Status.Canary; c == nil || c.Step != 1 || pr.Status.Share != 20 || res.RequeueAfter != 10*time.Second {
		t.Fatalf("after the first reconcile: canary %+v share %d requeue %s; want step 1 at 20%% for 10s", c, pr.Status.Share, res.RequeueAfter)
	}
	// Step 1's window: 400 stable and 100 canary requests, none failed.
	g.now = t0.Add(10 * time.Second)
	g.metrics["hello-abcdef0"], g.metrics["hello-pr-1-0123456"] = snap(400, 0), snap(100, 0)
	pr, _, err = g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	if c := pr.Status.Canary; c.Step != 2 || pr.Status.Share != 50 || c.Verdict != "Pass" {
		t.Fatalf("after a clean step: %+v share %d, want step 2 at 50%%", c, pr.Status.Share)
	}
	// Step 2's window: the canary fails a third of its requests.
	g.now = t0.Add(20 * time.Second)
	g.metrics["hello-abcdef0"], g.metrics["hello-pr-1-0123456"] = snap(800, 0), snap(400, 100)
	pr, _, err = g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	c := pr.Status.Canary
	if c.Phase != knitv1alpha1.CanaryRolledBack || pr.Status.Share != 0 || !strings.Contains(c.Message, "5xx rate 33.3% (100 of 300)") {
		t.Fatalf("after a failing step: %+v share %d, want rolled back to 0%% with the numbers", c, pr.Status.Share)
	}
	if len(g.announcer.failed) != 1 || !strings.HasPrefix(g.announcer.failed[0], head) {
		t.Errorf("canary.failed announcements = %q, want one for the head", g.announcer.failed)
	}
	last := g.forge.statuses[len(g.forge.statuses)-1]
	if last.Context != CanaryContext || last.State != forgeapi.StateFailure {
		t.Errorf("last status = %+v, want knit/canary failure", last)
	}
}

func TestReconcileReportsAnInvalidPlan(t *testing.T) {
	g := newRig(t, "knit: canary 50,20 every 2m")
	pr, _, err := g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	c := pr.Status.GetCondition(knitv1alpha1.PullRequestConditionCanary)
	if pr.Status.Canary == nil || pr.Status.Canary.Phase != knitv1alpha1.CanaryInvalid || !c.IsFalse() || c.Reason != "InvalidPlan" {
		t.Errorf("canary %+v, condition %+v; want Invalid with the reason", pr.Status.Canary, c)
	}
	if pr.Status.Share != 0 {
		t.Errorf("share %d with an unreadable plan, want 0", pr.Status.Share)
	}
}

func TestReconcileAutomergesAPromotedCanary(t *testing.T) {
	g := newRigWith(t, "knit: canary 50 every 10s", func(pr *knitv1alpha1.PullRequest) {
		pr.Spec.Labels, pr.Spec.HeadCommit = []string{"knit/automerge"}, head
	})
	if _, _, err := g.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if g.forge.merged {
		t.Fatal("merged before the canary was analysed")
	}
	g.now = t0.Add(10 * time.Second)
	g.metrics["hello-abcdef0"], g.metrics["hello-pr-1-0123456"] = snap(100, 0), snap(100, 0)
	pr, _, err := g.reconcile(t)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Status.Canary.Phase != knitv1alpha1.CanaryPromoted || !g.forge.merged || !pr.Status.Reported.Merged {
		t.Fatalf("canary %s, merged %v (reported %v); want promoted and merged once", pr.Status.Canary.Phase, g.forge.merged, pr.Status.Reported.Merged)
	}
	if g.forge.mergedSHA != head {
		t.Errorf("merge pinned to %q, want the analysed head %s", g.forge.mergedSHA, head)
	}
	g.forge.merged = false
	if _, _, err := g.reconcile(t); err != nil || g.forge.merged {
		t.Errorf("a resync merged again (err %v)", err)
	}
}
