//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/forge"
	"github.com/knitops/knit/gitsync/forgeapi"
	"github.com/knitops/knit/gitsync/hub"
	"github.com/knitops/knit/gitsync/plan"
)

// fakeForges stands for the forges of the suite's repositories that name
// a provider (as pullrequest.ForgeFromSecret decides); it records the
// commit statuses set, and fails the calls it was told to.
type fakeForges struct {
	mu       sync.Mutex
	set      map[string][]setStatus // by namespace/name of the repository
	attempts map[string]int
	fail     map[string]int // calls left to fail
}

type setStatus struct {
	sha    string
	status forgeapi.Status
}

func (f *fakeForges) client(_ context.Context, repo *knitv1alpha1.GitRepository) (Forge, error) {
	switch repo.Spec.Provider {
	case knitv1alpha1.GitProviderGitHub, knitv1alpha1.GitProviderGitLab, knitv1alpha1.GitProviderGitea:
		return &fakeForge{f: f, repo: repo.Namespace + "/" + repo.Name}, nil
	}
	return nil, nil
}

func (f *fakeForges) failNext(repo string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail == nil {
		f.fail = map[string]int{}
	}
	f.fail[repo] = n
}

// states are the states set on sha, in order.
func (f *fakeForges) states(repo, sha string) ([]string, []forgeapi.Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var states []string
	var all []forgeapi.Status
	for _, s := range f.set[repo] {
		if s.sha == sha {
			states = append(states, string(s.status.State))
			all = append(all, s.status)
		}
	}
	return states, all
}

func (f *fakeForges) counts(repo string) (attempts, set int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts[repo], len(f.set[repo])
}

type fakeForge struct {
	f    *fakeForges
	repo string
}

func (c *fakeForge) SetStatus(_ context.Context, sha string, s forgeapi.Status) error {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	if c.f.attempts == nil {
		c.f.attempts, c.f.set = map[string]int{}, map[string][]setStatus{}
	}
	c.f.attempts[c.repo]++
	if c.f.fail[c.repo] > 0 {
		c.f.fail[c.repo]--
		return &forgeapi.APIError{Provider: forge.ForgeGitea, Method: "POST", Path: "/api/v1/repos/ada/hello/statuses/" + sha, Status: 502, Message: "Bad Gateway"}
	}
	c.f.set[c.repo] = append(c.f.set[c.repo], setStatus{sha: sha, status: s})
	return nil
}

// TestDeployStatusOnTheForge follows knit/deploy on a forge's commits: a
// push is pending, then success at the Service's URL once its Revision
// serves; a refused commit and a failed Revision are failures saying why;
// no state is told twice for a commit, whatever passes run, and a forge
// error is retried.
func TestDeployStatusOnTheForge(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	key := ns + "/hello"
	forges.failNext(key, 1) // the forge's first answer is a 502
	g := newGitRepo(t)
	first := g.commit("Say hello", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("World")})
	repo := &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec:       knitv1alpha1.GitRepositorySpec{URL: g.dir, Provider: knitv1alpha1.GitProviderGitea, Interval: metav1.Duration{Duration: time.Hour}},
	}
	if err := k8s.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	url := "http://hello." + ns + ".localhost"

	t.Run("a push is pending, then success at the Service's URL once it serves", func(t *testing.T) {
		rev := "hello-" + first[:7]
		waitTemplate(t, ns, rev)
		got := waitStates(t, key, first, "pending")
		if got[0].Context != DeployContext || got[0].Description != "Deploying "+rev && got[0].Description != "Deploying hello" {
			t.Errorf("pending status %+v, want %s deploying %s", got[0], DeployContext, rev)
		}
		if attempts, set := forges.counts(key); attempts != set+1 {
			t.Errorf("%d calls for %d statuses set, want the failed one retried", attempts, set)
		}
		playServing(t, ns, rev, corev1.ConditionTrue, url)
		got = waitStates(t, key, first, "pending", "success")
		if got[1].TargetURL != url || got[1].Description != "Serving "+rev {
			t.Errorf("success status %+v, want serving %s at %s", got[1], rev, url)
		}
	})

	t.Run("a refused commit is a failure saying why", func(t *testing.T) {
		bad := g.commit("Break the YAML", map[string]string{"service.yaml": "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: [oops\n"})
		trigger(ns, "hello")
		got := waitStates(t, key, bad, "failure")
		if d := got[0].Description; !strings.HasPrefix(d, "Not deployed: ") || !strings.Contains(d, "service.yaml") || got[0].TargetURL != "" {
			t.Errorf("failure status %+v, want why %.7s was not deployed", got[0], bad)
		}
	})

	third := g.commit("Greet knit", map[string]string{"service.yaml": serviceYAML("knit")})
	t.Run("a failed Revision is a failure saying why", func(t *testing.T) {
		trigger(ns, "hello")
		rev := "hello-" + third[:7]
		waitTemplate(t, ns, rev)
		waitStates(t, key, third, "pending")
		playServing(t, ns, rev, corev1.ConditionFalse, url)
		got := waitStates(t, key, third, "pending", "failure")
		if got[1].Description != rev+" failed: Test" {
			t.Errorf("failure status %+v, want %s failed with the Revision's reason", got[1], rev)
		}
	})

	t.Run("no state is told twice, whatever passes run", func(t *testing.T) {
		c := newCosts(t, ns, "hello")
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, hub.RequestedAtAnnotation, time.Now().Format(time.RFC3339Nano))
		if err := k8s.Patch(ctx, &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}},
			client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
		c.waitFetches(t, 1)
		c.settle(t)
		_, set := forges.counts(key)
		if set != 5 {
			t.Errorf("%d statuses set, want 5: pending and success, failure, pending and failure", set)
		}
		_, r := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
		if r == nil || len(r.Status.Branches) != 1 || r.Status.Branches[0].Reported == nil ||
			*r.Status.Branches[0].Reported != (knitv1alpha1.DeployReport{Commit: third, State: "failure"}) {
			t.Errorf("branch status %+v, want what was told of %.7s recorded", r.Status.Branches, third)
		}
	})
}

// TestNoForgeNoDeployStatus: a repository without a forge provider tells
// nobody, and its status records nothing.
func TestNoForgeNoDeployStatus(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	first := g.commit("Say hello", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("World")})
	createRepo(t, ns, "hello", g.dir)
	rev := "hello-" + first[:7]
	waitTemplate(t, ns, rev)
	playServing(t, ns, rev, corev1.ConditionTrue, "http://hello."+ns+".localhost")
	eventually(t, "RevisionsReady", func(ctx context.Context) (bool, string) {
		c, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionRevisionsReady)
		return c.IsTrue(), fmt.Sprintf("%+v", c)
	})
	newCosts(t, ns, "hello") // settles
	if attempts, _ := forges.counts(ns + "/hello"); attempts != 0 {
		t.Errorf("%d statuses set for a repository without a forge", attempts)
	}
	_, r := repoCondition(context.Background(), ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
	if r == nil || len(r.Status.Branches) != 1 || r.Status.Branches[0].Reported != nil {
		t.Errorf("branch status %+v, want nothing reported", r.Status.Branches)
	}
}

// waitStates waits until exactly states were set on sha, in order, and
// returns those statuses.
func waitStates(t *testing.T, repo, sha string, states ...string) []forgeapi.Status {
	t.Helper()
	var all []forgeapi.Status
	eventually(t, fmt.Sprintf("%s %v on %.7s", DeployContext, states, sha), func(context.Context) (bool, string) {
		var got []string
		got, all = forges.states(repo, sha)
		return strings.Join(got, " ") == strings.Join(states, " "), fmt.Sprintf("%v: %+v", got, all)
	})
	return all
}

// playServing plays the Revision and Service reconcilers for Service
// hello's Revision rev: it exists and is ready (True) or failed (False);
// a ready one becomes the Service's latest ready, serving at url.
func playServing(t *testing.T, ns, rev string, ready corev1.ConditionStatus, url string) {
	t.Helper()
	ctx := context.Background()
	r := &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rev,
		Labels: map[string]string{plan.RepositoryLabel: "hello", plan.BranchLabel: "main", servingv1.ServiceLabelKey: "hello"}}}
	r.Spec.Containers = []corev1.Container{{Image: "example.com/hello"}}
	if err := k8s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	setReady(t, r, ns, rev, ready)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc, err := getService(ctx, ns, "hello")
		if err != nil {
			return err
		}
		svc.Status.ObservedGeneration = svc.Generation
		svc.Status.LatestCreatedRevisionName = rev
		svc.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: ready, Reason: "Test"}}
		if ready == corev1.ConditionTrue {
			svc.Status.LatestReadyRevisionName, svc.Status.URL = rev, url
		}
		return k8s.Status().Update(ctx, svc)
	}); err != nil {
		t.Fatal(err)
	}
}
