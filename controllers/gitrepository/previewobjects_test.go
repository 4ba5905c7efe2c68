//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
)

// readsConfigYAML is Service name, reading ConfigMap hello-config.
func readsConfigYAML(name string) string {
	return `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: ` + name + `
spec:
  template:
    spec:
      containers:
        - image: ko://./cmd/hello
          envFrom:
            - configMapRef: {name: hello-config}
`
}

func greetingYAML(name, greeting string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  greeting: " + greeting + "\n"
}

// TestWholePreviews: a pull request's head is previewed as a whole. A
// Service it adds gets a preview Service whose URL is the pull request's;
// a ConfigMap it changes gets a copy its preview Revisions read, while
// production's stays as it was; a name production holds is never
// written; closing the pull requests deletes what they deployed.
func TestWholePreviews(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	g := newGitRepo(t)
	g.commit("main", map[string]string{
		"kustomization.yaml": "resources:\n  - service.yaml\n  - config.yaml\n",
		"service.yaml":       readsConfigYAML("hello"),
		"config.yaml":        greetingYAML("hello-config", "hi"),
	})
	// Someone's ConfigMap happens to bear the name pull request 3's copy
	// would take.
	taken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello-config-pr-3"}, Data: map[string]string{"greeting": "production's"}}
	if err := k8s.Create(ctx, taken); err != nil {
		t.Fatal(err)
	}
	g.git("checkout", "-qb", "config")
	configHead := g.commit("Greet warmly", map[string]string{"config.yaml": greetingYAML("hello-config", "hello there")})
	g.git("checkout", "-q", "main")
	g.git("checkout", "-qb", "api")
	apiHead := g.commit("Add an API", map[string]string{
		"kustomization.yaml": "resources:\n  - service.yaml\n  - config.yaml\n  - api.yaml\n",
		"api.yaml":           readsConfigYAML("api"),
	})
	g.git("checkout", "-q", "main")
	g.git("branch", "collide", "config")
	createRepo(t, ns, "hello", g.dir)
	for n, head := range map[int64]string{1: "config", 2: "api", 3: "collide"} {
		createPR(t, ns, n, head)
	}

	t.Run("a changed ConfigMap is copied and read by the preview", func(t *testing.T) {
		cm := waitConfigMap(t, ns, "hello-config-pr-1", "hello there")
		if cm.Labels[plan.PullRequestLabel] != "1" || cm.Labels[plan.RepositoryLabel] != "hello" {
			t.Errorf("copy labels %v", cm.Labels)
		}
		rev := &servingv1.Revision{}
		preview := "hello-pr1-" + configHead[:7]
		eventually(t, "preview Revision "+preview, func(ctx context.Context) (bool, string) {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: preview}, rev)
			return err == nil, fmt.Sprint(err)
		})
		if got := rev.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name; got != "hello-config-pr-1" {
			t.Errorf("preview Revision reads ConfigMap %q, want the copy", got)
		}
		waitConfigMap(t, ns, "hello-config", "hi")
		// One apply writes the ConfigMap before the Service: wait for both.
		var svc *servingv1.Service
		eventually(t, "production's Service hello", func(ctx context.Context) (bool, string) {
			var err error
			svc, err = getService(ctx, ns, "hello")
			return err == nil, fmt.Sprint(err)
		})
		if got := svc.Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name; got != "hello-config" {
			t.Errorf("production's Service reads %q", got)
		}
	})

	t.Run("an added Service gets a preview Service whose URL is the pull request's", func(t *testing.T) {
		svc := &servingv1.Service{}
		eventually(t, "preview Service api-pr-2", func(ctx context.Context) (bool, string) {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api-pr-2"}, svc)
			return err == nil, fmt.Sprint(err)
		})
		if svc.Labels[plan.PullRequestLabel] != "2" || svc.Spec.Template.Name != "api-pr-2-"+apiHead[:7] {
			t.Errorf("preview Service labels %v, template %q", svc.Labels, svc.Spec.Template.Name)
		}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api"}, &servingv1.Service{}); !apierrors.IsNotFound(err) {
			t.Errorf("Service api deployed to production: %v", err)
		}
		url := "http://api-pr-2." + ns + ".example.com"
		playPreviewService(t, ns, "api-pr-2", svc.Spec.Template.Name, url)
		waitPreview(t, ns, 2, "ready with its preview Service api-pr-2", func(p *knitv1alpha1.PreviewStatus) bool {
			return p.Phase == knitv1alpha1.PreviewReady && slices.Equal(p.Services, []string{"api-pr-2"}) && len(p.RevisionNames) == 0
		})
	})

	t.Run("a name production holds is never written", func(t *testing.T) {
		waitPreview(t, ns, 3, "failed naming the ConfigMap", func(p *knitv1alpha1.PreviewStatus) bool {
			return p.Phase == knitv1alpha1.PreviewFailed && strings.Contains(p.Message, "ConfigMap hello-config-pr-3")
		})
		waitConfigMap(t, ns, "hello-config-pr-3", "production's")
	})

	t.Run("closing the pull requests deletes their previews", func(t *testing.T) {
		for _, n := range []string{"hello-1", "hello-2", "hello-3"} {
			updatePR(t, ns, n, func(pr *knitv1alpha1.PullRequest) { pr.Spec.State = knitv1alpha1.PullRequestClosed })
		}
		eventually(t, "preview Service and copy deleted", func(ctx context.Context) (bool, string) {
			for name, o := range map[string]client.Object{"api-pr-2": &servingv1.Service{}, "hello-config-pr-1": &corev1.ConfigMap{}} {
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o); !apierrors.IsNotFound(err) {
					return false, fmt.Sprintf("%s: %v", name, err)
				}
			}
			return true, ""
		})
		waitConfigMap(t, ns, "hello-config", "hi")
		waitConfigMap(t, ns, "hello-config-pr-3", "production's")
	})
}

func createPR(t *testing.T, ns string, number int64, head string) {
	t.Helper()
	pr := &knitv1alpha1.PullRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("hello-%d", number)},
		Spec: knitv1alpha1.PullRequestSpec{Repository: "hello", Number: number, HeadBranch: head, BaseBranch: "main",
			State: knitv1alpha1.PullRequestOpen},
	}
	if err := k8s.Create(context.Background(), pr); err != nil {
		t.Fatal(err)
	}
}

// waitConfigMap waits for ConfigMap name to greet with greeting.
func waitConfigMap(t *testing.T, ns, name, greeting string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	eventually(t, fmt.Sprintf("ConfigMap %s greets %q", name, greeting), func(ctx context.Context) (bool, string) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			return false, err.Error()
		}
		return cm.Data["greeting"] == greeting, fmt.Sprint(cm.Data)
	})
	return cm
}

// playPreviewService plays the Configuration, Revision and Service
// reconcilers for preview Service name: its Revision rev exists and is
// ready, and the Service is ready at url.
func playPreviewService(t *testing.T, ns, name, rev, url string) {
	t.Helper()
	ctx := context.Background()
	r := &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rev,
		Labels: map[string]string{plan.RepositoryLabel: "hello", servingv1.ServiceLabelKey: name}}}
	r.Spec.Containers = []corev1.Container{{Image: "example.com/api"}}
	if err := k8s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	setReady(t, r, ns, rev, corev1.ConditionTrue)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc, err := getService(ctx, ns, name)
		if err != nil {
			return err
		}
		svc.Status.ObservedGeneration = svc.Generation
		svc.Status.LatestCreatedRevisionName, svc.Status.LatestReadyRevisionName, svc.Status.URL = rev, rev, url
		svc.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue, Reason: "Test"}}
		return k8s.Status().Update(ctx, svc)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestDeletionPolicyDeletesPreviews: the preview Services and copies are
// in the inventory, marked with their pull request, so deleting the
// GitRepository (deletionPolicy Delete) deletes them with the rest.
func TestDeletionPolicyDeletesPreviews(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	g := newGitRepo(t)
	g.commit("main", map[string]string{
		"kustomization.yaml": "resources:\n  - service.yaml\n  - config.yaml\n",
		"service.yaml":       readsConfigYAML("hello"),
		"config.yaml":        greetingYAML("hello-config", "hi"),
	})
	g.git("checkout", "-qb", "both")
	g.commit("Add an API, greet warmly", map[string]string{
		"kustomization.yaml": "resources:\n  - service.yaml\n  - config.yaml\n  - api.yaml\n",
		"config.yaml":        greetingYAML("hello-config", "hello there"),
		"api.yaml":           readsConfigYAML("api"),
	})
	g.git("checkout", "-q", "main")
	createRepo(t, ns, "hello", g.dir)
	createPR(t, ns, 1, "both")
	waitConfigMap(t, ns, "hello-config-pr-1", "hello there")
	svc := &servingv1.Service{}
	eventually(t, "preview Service api-pr-1 reading the copy", func(ctx context.Context) (bool, string) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api-pr-1"}, svc); err != nil {
			return false, err.Error()
		}
		got := svc.Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name
		return got == "hello-config-pr-1", "reads " + got
	})
	repo := &knitv1alpha1.GitRepository{}
	eventually(t, "the previews in the inventory", func(ctx context.Context) (bool, string) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, repo); err != nil {
			return false, err.Error()
		}
		previews := 0
		for _, ref := range repo.Status.Inventory {
			if ref.PullRequest == 1 && ref.Branch == "main" {
				previews++
			}
		}
		return previews == 2, fmt.Sprintf("%+v", repo.Status.Inventory)
	})

	if err := k8s.Delete(ctx, repo); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the GitRepository and its previews gone", func(ctx context.Context) (bool, string) {
		for _, o := range []struct {
			name string
			obj  client.Object
		}{{"hello", &knitv1alpha1.GitRepository{}}, {"api-pr-1", &servingv1.Service{}}, {"hello-config-pr-1", &corev1.ConfigMap{}}} {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.name}, o.obj); !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("%s: %v", o.name, err)
			}
		}
		return true, ""
	})
}

// TestInvalidPreviewWritesNothing: a head whose copy the API refuses
// fails its pull request's preview naming the copy, and nothing of it is
// written: not the preview Service it adds (every object is dry-run
// first), not a preview Revision, not production's ConfigMap.
func TestInvalidPreviewWritesNothing(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	g.commit("main", map[string]string{
		"kustomization.yaml": "resources:\n  - service.yaml\n  - config.yaml\n",
		"service.yaml":       readsConfigYAML("hello"),
		"config.yaml":        greetingYAML("hello-config", "hi"),
	})
	g.git("checkout", "-qb", "bad")
	head := g.commit("Break the config", map[string]string{
		"kustomization.yaml": "resources:\n  - service.yaml\n  - config.yaml\n  - api.yaml\n",
		// A ConfigMap key may not hold a space: the API refuses it.
		"config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello-config\ndata:\n  bad key: hello\n",
		"api.yaml":    readsConfigYAML("api"),
	})
	g.git("checkout", "-q", "main")
	createRepo(t, ns, "hello", g.dir)
	createPR(t, ns, 1, "bad")
	waitPreview(t, ns, 1, "failed naming the copy", func(p *knitv1alpha1.PreviewStatus) bool {
		return p.Phase == knitv1alpha1.PreviewFailed && strings.Contains(p.Message, "ConfigMap hello-config-pr-1")
	})
	ctx := context.Background()
	for name, o := range map[string]client.Object{
		"api-pr-1": &servingv1.Service{}, "hello-config-pr-1": &corev1.ConfigMap{}, "hello-pr1-" + head[:7]: &servingv1.Revision{},
	} {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o); !apierrors.IsNotFound(err) {
			t.Errorf("%s written for an invalid head: %v", name, err)
		}
	}
	waitConfigMap(t, ns, "hello-config", "hi")
}

// waitPreview waits until repository hello's status.previews entry for
// pull request number satisfies ok: what its PullRequest's status is
// computed from (controllers/pullrequest).
func waitPreview(t *testing.T, ns string, number int64, what string, ok func(*knitv1alpha1.PreviewStatus) bool) {
	t.Helper()
	eventually(t, fmt.Sprintf("pull request %d's preview %s", number, what), func(ctx context.Context) (bool, string) {
		repo := &knitv1alpha1.GitRepository{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, repo); err != nil {
			return false, err.Error()
		}
		p := repo.Status.Preview(number)
		return p != nil && ok(p), fmt.Sprintf("%+v", p)
	})
}
