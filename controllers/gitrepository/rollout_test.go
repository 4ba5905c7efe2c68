package gitrepository

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/canary"
)

// fakeMetrics plays the queue-proxies of the test's Revisions: each read
// of a Revision's counters is its n-th, and served says what its one
// replica has counted by then.
type fakeMetrics struct {
	mu     sync.Mutex
	counts map[string]int
	served map[string]func(n int) canary.Snapshot
}

func (f *fakeMetrics) read(_ context.Context, _, revision string) (map[string]canary.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[revision]++
	serve := f.served[revision]
	if serve == nil {
		return map[string]canary.Snapshot{}, nil
	}
	return map[string]canary.Snapshot{"replica": serve(f.counts[revision])}, nil
}

func (f *fakeMetrics) serve(revision string, fn func(n int) canary.Snapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.served[revision] = fn
}

// answering counts 100 requests a read, the share errs of them 5xx,
// every one within 5 ms.
func answering(errs float64) func(n int) canary.Snapshot {
	return func(n int) canary.Snapshot {
		r := float64(100 * n)
		return canary.Snapshot{Requests: r, Errors5xx: r * errs,
			Buckets: []canary.Bucket{{UpperBound: 0.005, Count: r}, {UpperBound: math.Inf(1), Count: r}}}
	}
}

func rolloutServiceYAML(target string) string {
	return strings.Replace(serviceYAML(target), "  name: hello\n", "  name: hello\n  annotations:\n    knit.dev/rollout: \"20,50 every 5s\"\n", 1)
}

// TestPushRollout follows pushes to main of a Service that asks for a
// stepped rollout: the first deploy goes at once; a new Revision waits
// for readiness with the old one serving, takes 20 % then 50 % as each
// step's analysis passes, and is promoted to all traffic; a Revision
// that answers 5xx is rolled back to the one before at its first step,
// with the numbers on the condition, the forge's knit/deploy and the
// user's event sinks; the next push rolls out against the Revision that
// served all along.
func TestPushRollout(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	key := ns + "/hello"
	g := newGitRepo(t)
	c1 := g.commit("Say hello", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": rolloutServiceYAML("World")})
	repo := &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec:       knitv1alpha1.GitRepositorySpec{URL: g.dir, Provider: knitv1alpha1.GitProviderGitea, Interval: metav1.Duration{Duration: 3600e9}},
	}
	if err := k8s.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	url := "http://hello." + ns + ".localhost"
	rev1 := "hello-" + c1[:7]
	waitTemplate(t, ns, rev1)
	playServing(t, ns, rev1, corev1.ConditionTrue, url)
	waitStates(t, key, c1, "pending", "success")
	if r := rolloutsOf(t, ns); len(r) != 0 {
		t.Fatalf("the first deploy rolls out at once, got rollouts %+v", r)
	}
	served.serve(rev1, answering(0))

	c2 := g.commit("Greet knit", map[string]string{"service.yaml": rolloutServiceYAML("knit")})
	rev2 := "hello-" + c2[:7]
	t.Run("a new Revision waits for readiness while the old one serves", func(t *testing.T) {
		trigger(ns, "hello")
		svc := waitTemplate(t, ns, rev2)
		waitTraffic(t, ns, "all to the old Revision", want{rev1, 100})
		if !strings.Contains(svc.Annotations["knit.dev/rollout"], "20,50") {
			t.Errorf("the applied Service lost its annotation: %v", svc.Annotations)
		}
		waitRolloutCondition(t, ns, "Unknown", "waiting for Revision "+rev2)
	})

	t.Run("a good Revision takes each step and is promoted", func(t *testing.T) {
		served.serve(rev2, answering(0))
		playServing(t, ns, rev2, corev1.ConditionTrue, url)
		waitTraffic(t, ns, "step 1", want{rev1, 80}, want{rev2, 20})
		waitStates(t, key, c2, "pending")
		waitTraffic(t, ns, "step 2", want{rev1, 50}, want{rev2, 50})
		waitTraffic(t, ns, "promoted: Git's traffic")
		waitRolloutCondition(t, ns, "True", "")
		ro := rolloutsOf(t, ns)
		if len(ro) != 1 || ro[0].Phase != knitv1alpha1.CanaryPromoted || ro[0].Stable != rev1 || ro[0].Revision != rev2 || ro[0].Commit != c2 {
			t.Errorf("rollouts %+v, want %s promoted over %s", ro, rev2, rev1)
		}
		observed(t, ns)
		waitStates(t, key, c2, "pending", "success")
	})

	c3 := g.commit("Break the orders", map[string]string{"service.yaml": rolloutServiceYAML("broken")})
	rev3 := "hello-" + c3[:7]
	t.Run("a Revision answering 5xx is rolled back with the numbers", func(t *testing.T) {
		trigger(ns, "hello")
		waitTemplate(t, ns, rev3)
		served.serve(rev3, answering(0.5))
		playServing(t, ns, rev3, corev1.ConditionTrue, url)
		waitTraffic(t, ns, "step 1", want{rev2, 80}, want{rev3, 20})
		waitTraffic(t, ns, "rolled back: all to the Revision before", want{rev2, 100})
		c := waitRolloutCondition(t, ns, "False", "5xx")
		if c.Reason != knitv1alpha1.ReasonRolloutFailed || !strings.Contains(c.Message, rev3) || !strings.Contains(c.Message, rev2+" serves") {
			t.Errorf("Rollouts condition %+v, want RolloutFailed naming %s and %s", c, rev3, rev2)
		}
		observed(t, ns)
		got := waitStates(t, key, c3, "pending", "failure")
		if d := got[1].Description; !strings.Contains(d, rev3+" rolled back") || !strings.Contains(d, "5xx") {
			t.Errorf("knit/deploy failure %q, want the rollback and its numbers", d)
		}
		eventually(t, "the rollback announced", func(context.Context) (bool, string) {
			announced.mu.Lock()
			defer announced.mu.Unlock()
			for _, ro := range announced.rollbacks {
				if ro.Revision == rev3 && ro.Commit == c3 && strings.Contains(ro.Message, "5xx") {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", announced.rollbacks)
		})
		if ready, _ := repoCondition(ctx, ns, "hello", duckv1.ConditionReady); !ready.IsTrue() {
			t.Errorf("Ready %+v: a rollback is the rollout working, not the repository failing", ready)
		}
	})

	t.Run("the next push rolls out against the Revision that served all along", func(t *testing.T) {
		c4 := g.commit("Fix the orders", map[string]string{"service.yaml": rolloutServiceYAML("fixed")})
		trigger(ns, "hello")
		rev4 := "hello-" + c4[:7]
		waitTemplate(t, ns, rev4)
		waitTraffic(t, ns, "all to the Revision before the rollback", want{rev2, 100})
		eventually(t, "a rollout of "+rev4+" against "+rev2, func(context.Context) (bool, string) {
			ro := rolloutsOf(t, ns)
			return len(ro) == 1 && ro[0].Revision == rev4 && ro[0].Stable == rev2 && ro[0].Phase == knitv1alpha1.CanaryProgressing, fmt.Sprintf("%+v", ro)
		})
	})
}

// TestPushRolloutRefusesAHandWrittenSplit: a rollout cannot share the
// decision with spec.traffic percentages; the commit is refused naming
// both, and what served keeps serving.
func TestPushRolloutRefusesAHandWrittenSplit(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	g.commit("Split by hand", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n",
		"service.yaml": rolloutServiceYAML("World") + "  traffic:\n    - latestRevision: true\n      percent: 90\n    - revisionName: hello-old\n      percent: 10\n"})
	createRepo(t, ns, "hello", g.dir)
	eventually(t, "the commit refused", func(ctx context.Context) (bool, string) {
		c, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
		return c.IsFalse() && strings.Contains(c.Message, "knit.dev/rollout") && strings.Contains(c.Message, "spec.traffic"), fmt.Sprintf("%+v", c)
	})
}

type want struct {
	revision string
	percent  int64
}

// waitTraffic waits until Service hello's spec.traffic is exactly the
// pinned targets given; none means Git's own (no traffic block).
func waitTraffic(t *testing.T, ns, what string, targets ...want) {
	t.Helper()
	eventually(t, "traffic: "+what, func(ctx context.Context) (bool, string) {
		svc, err := getService(ctx, ns, "hello")
		if err != nil {
			return false, err.Error()
		}
		got := fmt.Sprint(trafficOf(svc.Spec.Traffic))
		return got == fmt.Sprint(targets), got
	})
}

func trafficOf(tt []servingv1.TrafficTarget) []want {
	var out []want
	for _, t := range tt {
		out = append(out, want{t.RevisionName, ptr.Deref(t.Percent, 0)})
	}
	return out
}

func rolloutsOf(t *testing.T, ns string) []knitv1alpha1.RolloutStatus {
	t.Helper()
	_, repo := repoCondition(context.Background(), ns, "hello", knitv1alpha1.GitRepositoryConditionRollouts)
	if repo == nil {
		t.Fatal("no GitRepository hello")
	}
	return repo.Status.Rollouts
}

func waitRolloutCondition(t *testing.T, ns, status, message string) *duckv1.Condition {
	t.Helper()
	var c *duckv1.Condition
	eventually(t, "Rollouts "+status+" "+message, func(ctx context.Context) (bool, string) {
		cond, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionRollouts)
		c = cond
		return cond != nil && string(cond.Status) == status && strings.Contains(cond.Message, message), fmt.Sprintf("%+v", cond)
	})
	return c
}

// observed plays the Service reconciler catching up with the Service's
// latest spec (a traffic change bumps its generation).
func observed(t *testing.T, ns string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc, err := getService(context.Background(), ns, "hello")
		if err != nil {
			return err
		}
		svc.Status.ObservedGeneration = svc.Generation
		return k8s.Status().Update(context.Background(), svc)
	}); err != nil {
		t.Fatal(err)
	}
}
