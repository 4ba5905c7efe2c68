//go:build !unit

package gitrepository

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/pullrequest"
	"github.com/knitops/knit/gitsync/canary"
	prmodel "github.com/knitops/knit/gitsync/pullrequest"
)

// TestRestartKeepsPreviews: a GitRepository reconciler started afresh
// remembers nothing, yet its first passes, one of them unable to fetch,
// keep the repository's record of the previews, and the PullRequest,
// whose status its own reconciler computes from that record, stays Ready
// at its URL throughout. The fresh reconciler writes no PullRequest.
func TestRestartKeepsPreviews(t *testing.T) {
	ctx := context.Background()
	startPullRequests(t)
	ns := newNamespace(t)
	g := newGitRepo(t)
	g.commit("main", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("main")})
	g.git("checkout", "-qb", "feature")
	head := g.commit("feature", map[string]string{"service.yaml": serviceYAML("feature")})
	g.git("checkout", "-q", "main")
	createRepo(t, ns, "hello", g.dir)
	pr := &knitv1alpha1.PullRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: prmodel.Name("hello", 1)},
		Spec: knitv1alpha1.PullRequestSpec{Repository: "hello", Number: 1, HeadBranch: "feature", BaseBranch: "main",
			State: knitv1alpha1.PullRequestOpen},
	}
	if err := k8s.Create(ctx, pr); err != nil {
		t.Fatal(err)
	}
	preview := "hello-pr1-" + head[:7]
	setReady(t, &servingv1.Revision{}, ns, preview, corev1.ConditionTrue)
	url := routeTag(t, ns, "hello", "pr-1", preview)
	previews := waitPreviewReady(t, ns, pr.Name, url)

	flips := watchReady(t, ns, pr.Name)
	writes := &prWrites{}
	opts := options
	fresh := newReconciler(mgr, &opts)
	fresh.client = interceptor.NewClient(unwatched{mgr.GetClient()}, writes.funcs())
	key := types.NamespacedName{Namespace: ns, Name: "hello"}

	away := g.dir + ".away"
	if err := os.Rename(g.dir, away); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err == nil {
		t.Error("a pass with the remote gone succeeded")
	}
	checkPreviews(t, ns, previews, "after a pass that could not fetch")
	if err := os.Rename(away, g.dir); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := retry.OnError(retry.DefaultRetry, func(error) bool { return true }, func() error {
			_, err := fresh.Reconcile(ctx, ctrl.Request{NamespacedName: key})
			return err
		}); err != nil {
			t.Fatalf("pass %d of the fresh reconciler: %v", i+1, err)
		}
		checkPreviews(t, ns, previews, fmt.Sprintf("after pass %d of the fresh reconciler", i+1))
	}
	waitPreviewReady(t, ns, pr.Name, url)
	if got := flips(); len(got) > 0 {
		t.Errorf("the PullRequest's Ready moved during the restart: %v", got)
	}
	if n := writes.count(); n > 0 {
		t.Errorf("the GitRepository reconciler wrote PullRequests %d times", n)
	}
}

// startPullRequests runs the PullRequest reconciler, with no forge and no
// metrics, until the test ends.
func startPullRequests(t *testing.T) {
	t.Helper()
	m, err := ctrl.NewManager(mgr.GetConfig(), ctrl.Options{Scheme: mgr.GetScheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	noForge := func(context.Context, *knitv1alpha1.GitRepository) (pullrequest.Forge, error) { return nil, nil }
	noMetrics := func(context.Context, string, string) (map[string]canary.Snapshot, error) { return nil, nil }
	if err := pullrequest.SetupWithManager(m, pullrequest.Options{Forges: noForge, Metrics: noMetrics}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := m.Start(ctx); err != nil {
			t.Errorf("PullRequest manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// routeTag gives tag a URL in Service svc's routes, as the Route
// reconciler would, and returns it.
func routeTag(t *testing.T, ns, svc, tag, revision string) string {
	t.Helper()
	url := fmt.Sprintf("http://%s-%s.%s.localhost", tag, svc, ns)
	eventually(t, "Service "+svc+" routes "+tag, func(ctx context.Context) (bool, string) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s, err := getService(ctx, ns, svc)
			if err != nil {
				return err
			}
			s.Status.Traffic = []servingv1.TrafficTarget{{Tag: tag, RevisionName: revision, URL: url, Percent: ptr.To[int64](0)}}
			return k8s.Status().Update(ctx, s)
		})
		return err == nil, fmt.Sprint(err)
	})
	return url
}

// waitPreviewReady waits for the PullRequest to be Ready at url, written
// by its own reconciler, and returns the repository's previews then.
func waitPreviewReady(t *testing.T, ns, name, url string) []knitv1alpha1.PreviewStatus {
	t.Helper()
	eventually(t, "PullRequest "+name+" ready at "+url, func(ctx context.Context) (bool, string) {
		pr := &knitv1alpha1.PullRequest{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pr); err != nil {
			return false, err.Error()
		}
		return pr.Status.GetCondition(duckv1.ConditionReady).IsTrue() && pr.Status.URL == url && pr.Status.ObservedGeneration == pr.Generation,
			fmt.Sprintf("%+v", pr.Status)
	})
	pr := &knitv1alpha1.PullRequest{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pr); err != nil {
		t.Fatal(err)
	}
	for _, f := range pr.ManagedFields {
		if f.Subresource == "status" && f.Manager != "knit-pullrequest" {
			t.Errorf("PullRequest status written by %s: only knit-pullrequest may", f.Manager)
		}
	}
	_, repo := repoCondition(context.Background(), ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
	if repo == nil || len(repo.Status.Previews) != 1 || repo.Status.Previews[0].Phase != knitv1alpha1.PreviewReady {
		t.Fatalf("repository %+v, want its one preview recorded ready", repo)
	}
	return repo.Status.Previews
}

func checkPreviews(t *testing.T, ns string, want []knitv1alpha1.PreviewStatus, when string) {
	t.Helper()
	repo := &knitv1alpha1.GitRepository{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "hello"}, repo); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(repo.Status.Previews, want) {
		t.Errorf("%s: previews %+v, want %+v", when, repo.Status.Previews, want)
	}
}

// watchReady watches PullRequest name from now on and returns what of
// its Ready condition was not True until then.
func watchReady(t *testing.T, ns, name string) func() []string {
	t.Helper()
	wc, err := client.NewWithWatch(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &knitv1alpha1.PullRequestList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var seen []string
	go func() {
		for ev := range w.ResultChan() {
			pr, ok := ev.Object.(*knitv1alpha1.PullRequest)
			if !ok || pr.Name != name || ev.Type == watch.Deleted {
				continue
			}
			if c := pr.Status.GetCondition(duckv1.ConditionReady); !c.IsTrue() || pr.Status.URL == "" {
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%s: %+v url %q", ev.Type, c, pr.Status.URL))
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// unwatched is a client for interceptor, which wraps watching ones; the
// reconciler never watches through its client.
type unwatched struct{ client.Client }

func (unwatched) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("not watched")
}

// prWrites counts a client's writes to PullRequests, status included.
type prWrites struct {
	mu sync.Mutex
	n  int
}

func (w *prWrites) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

func (w *prWrites) saw(obj client.Object) {
	if _, ok := obj.(*knitv1alpha1.PullRequest); ok {
		w.mu.Lock()
		w.n++
		w.mu.Unlock()
	}
}

func (w *prWrites) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			w.saw(obj)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			w.saw(obj)
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			w.saw(obj)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			w.saw(obj)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}
}
