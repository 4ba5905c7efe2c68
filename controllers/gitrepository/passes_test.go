//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/hub"
	"github.com/knitops/knit/gitsync/plan"
)

// TestPassesCostWhatChanged counts fetches and applies: status changes of
// Services, Revisions and PullRequests cost neither, a requested sync of
// an unchanged head one fetch, a new commit one of each, a canary step
// one apply.
func TestPassesCostWhatChanged(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	g := newGitRepo(t)
	first := g.commit("main", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("main")})
	g.git("checkout", "-qb", "feature")
	head := g.commit("feature", map[string]string{"service.yaml": serviceYAML("feature")})
	g.git("checkout", "-q", "main")
	createRepo(t, ns, "hello", g.dir)
	pr := &knitv1alpha1.PullRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello-1"},
		Spec: knitv1alpha1.PullRequestSpec{Repository: "hello", Number: 1, HeadBranch: "feature", BaseBranch: "main",
			State: knitv1alpha1.PullRequestOpen, CanaryPercent: 20},
	}
	if err := k8s.Create(ctx, pr); err != nil {
		t.Fatal(err)
	}
	preview := "hello-pr1-" + head[:7]
	setReady(t, &servingv1.Revision{}, ns, preview, corev1.ConditionTrue)
	waitShare(t, ns, preview, 20)
	c := newCosts(t, ns, "hello")

	t.Run("a Service's and a Revision's status cost neither", func(t *testing.T) {
		// No runtime here: play the Service and Revision reconcilers.
		latest := "hello-" + first[:7]
		rev := &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: latest,
			Labels: map[string]string{plan.RepositoryLabel: "hello", plan.BranchLabel: "main", servingv1.ServiceLabelKey: "hello"}}}
		rev.Spec.Containers = []corev1.Container{{Image: "example.com/hello"}}
		if err := k8s.Create(ctx, rev); err != nil {
			t.Fatal(err)
		}
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			svc, err := getService(ctx, ns, "hello")
			if err != nil {
				return err
			}
			svc.Status.LatestCreatedRevisionName = latest
			return k8s.Status().Update(ctx, svc)
		}); err != nil {
			t.Fatal(err)
		}
		for _, status := range []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue} {
			setReady(t, rev, ns, latest, status)
			eventually(t, fmt.Sprintf("RevisionsReady %s", status), func(ctx context.Context) (bool, string) {
				cond, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionRevisionsReady)
				return cond != nil && cond.Status == status, fmt.Sprintf("%+v", cond)
			})
		}
		c.expect(t, 0, 0)
	})

	t.Run("a pull request's status costs neither", func(t *testing.T) {
		for i := range 3 {
			updatePRStatus(t, ns, "hello-1", func(pr *knitv1alpha1.PullRequest) {
				pr.Status.Reported = &knitv1alpha1.ForgeReport{Commit: head, Preview: "pending", Comment: fmt.Sprint(i)}
			})
		}
		c.expect(t, 0, 0)
	})

	t.Run("a requested sync of an unchanged head fetches once and applies nothing", func(t *testing.T) {
		repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, hub.RequestedAtAnnotation, time.Now().Format(time.RFC3339Nano))
		if err := k8s.Patch(ctx, repo, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
		c.waitFetches(t, 1)
		c.expect(t, 1, 0)
	})

	t.Run("a new commit fetches and applies once", func(t *testing.T) {
		second := g.commit("Greet knit", map[string]string{"service.yaml": serviceYAML("knit")})
		trigger(ns, "hello")
		waitTemplate(t, ns, "hello-"+second[:7])
		eventually(t, "main applied at "+second[:7], func(ctx context.Context) (bool, string) {
			_, repo := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
			if repo == nil || len(repo.Status.Branches) == 0 {
				return false, "no branch status"
			}
			return repo.Status.Branches[0].AppliedCommit == second, fmt.Sprintf("%+v", repo.Status.Branches)
		})
		c.expect(t, 1, 1)
	})

	t.Run("a canary step applies once and fetches nothing", func(t *testing.T) {
		updatePRStatus(t, ns, "hello-1", func(pr *knitv1alpha1.PullRequest) {
			pr.Status.Canary = &knitv1alpha1.CanaryStatus{Commit: head, Phase: knitv1alpha1.CanaryProgressing, Step: 2, Steps: []int64{20, 50}, Percent: 50}
		})
		waitShare(t, ns, preview, 50)
		c.expect(t, 0, 1)
	})
}

// costs reads a repository's fetch and apply counters from
// controller-runtime's metrics registry, as /metrics serves them.
type costs struct {
	ns, name         string
	fetches, applies float64 // at the last expect
	sentinel         int
}

// newCosts starts counting once the repository has settled.
func newCosts(t *testing.T, ns, name string) *costs {
	t.Helper()
	sentinel := &knitv1alpha1.PullRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-99"},
		Spec: knitv1alpha1.PullRequestSpec{Repository: name, Number: 99, HeadBranch: "main", BaseBranch: "untracked-0",
			State: knitv1alpha1.PullRequestOpen},
	}
	if err := k8s.Create(context.Background(), sentinel); err != nil {
		t.Fatal(err)
	}
	c := &costs{ns: ns, name: name}
	c.settle(t)
	c.fetches, c.applies = c.read(t)
	return c
}

// settle makes sure every event sent so far has been through a pass: it
// moves a sentinel pull request into an untracked base branch, which no
// pass fetches or applies for, and waits for a pass that read it there to
// finish. The PullRequest informer delivers in order and one repository's
// passes run one at a time, so that pass ran after those of earlier
// events.
func (c *costs) settle(t *testing.T) {
	t.Helper()
	c.sentinel++
	base := fmt.Sprintf("untracked-%d", c.sentinel)
	updatePR(t, c.ns, c.name+"-99", func(pr *knitv1alpha1.PullRequest) { pr.Spec.BaseBranch = base })
	key := types.NamespacedName{Namespace: c.ns, Name: c.name}
	eventually(t, "a pass read the sentinel pull request into "+base, func(context.Context) (bool, string) {
		pr, ok := passes.read(key, c.name+"-99")
		return ok && pr.Spec.BaseBranch == base, fmt.Sprintf("read %t, base %q", ok, pr.Spec.BaseBranch)
	})
}

// expect settles, then checks the fetches and applies since the last call.
func (c *costs) expect(t *testing.T, fetches, applies float64) {
	t.Helper()
	c.settle(t)
	f, a := c.read(t)
	if f-c.fetches != fetches || a-c.applies != applies {
		t.Errorf("%g fetches and %g applies, want %g and %g", f-c.fetches, a-c.applies, fetches, applies)
	}
	c.fetches, c.applies = f, a
}

// waitFetches waits for n fetches since the last expect.
func (c *costs) waitFetches(t *testing.T, n float64) {
	t.Helper()
	eventually(t, fmt.Sprintf("%g fetches", n), func(context.Context) (bool, string) {
		f, _ := c.read(t)
		return f-c.fetches >= n, fmt.Sprintf("%g fetches", f-c.fetches)
	})
}

func (c *costs) read(t *testing.T) (fetches, applies float64) {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] != c.ns || labels["name"] != c.name {
				continue
			}
			switch f.GetName() {
			case "knit_gitrepository_fetches_total":
				fetches = m.GetCounter().GetValue()
			case "knit_gitrepository_applies_total":
				applies = m.GetCounter().GetValue()
			}
		}
	}
	return fetches, applies
}

// setReady sets the Ready condition of Revision name, as the Revision
// reconciler would.
func setReady(t *testing.T, rev *servingv1.Revision, ns, name string, status corev1.ConditionStatus) {
	t.Helper()
	eventually(t, "Revision "+name+" ready "+string(status), func(ctx context.Context) (bool, string) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rev); err != nil {
			return false, err.Error()
		}
		rev.Status.Conditions = []duckv1.Condition{{Type: duckv1.ConditionReady, Status: status, Reason: "Test"}}
		err := k8s.Status().Update(ctx, rev)
		return err == nil, fmt.Sprint(err)
	})
}

// updatePR changes a PullRequest's spec, as a forge webhook would.
func updatePR(t *testing.T, ns, name string, change func(*knitv1alpha1.PullRequest)) {
	t.Helper()
	writePR(t, ns, name, change, func(ctx context.Context, pr *knitv1alpha1.PullRequest) error { return k8s.Update(ctx, pr) })
}

// updatePRStatus changes a PullRequest's status, as its reconciler would.
func updatePRStatus(t *testing.T, ns, name string, change func(*knitv1alpha1.PullRequest)) {
	t.Helper()
	writePR(t, ns, name, change, func(ctx context.Context, pr *knitv1alpha1.PullRequest) error { return k8s.Status().Update(ctx, pr) })
}

func writePR(t *testing.T, ns, name string, change func(*knitv1alpha1.PullRequest), write func(context.Context, *knitv1alpha1.PullRequest) error) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pr := &knitv1alpha1.PullRequest{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pr); err != nil {
			return err
		}
		change(pr)
		return write(context.Background(), pr)
	}); err != nil {
		t.Fatal(err)
	}
}

// waitShare waits for Service hello to give the preview percent.
func waitShare(t *testing.T, ns, preview string, percent int64) {
	t.Helper()
	eventually(t, fmt.Sprintf("preview %s has %d%%", preview, percent), func(ctx context.Context) (bool, string) {
		svc, err := getService(ctx, ns, "hello")
		if err != nil {
			return false, err.Error()
		}
		for _, tg := range svc.Spec.Traffic {
			if tg.RevisionName == preview && ptr.Deref(tg.Percent, 0) == percent {
				return true, ""
			}
		}
		return false, fmt.Sprintf("traffic %+v", svc.Spec.Traffic)
	})
}
