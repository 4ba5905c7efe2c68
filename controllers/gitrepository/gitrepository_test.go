//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
)

func serviceYAML(target string) string {
	return `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: hello
spec:
  template:
    spec:
      containers:
        - image: ko://./cmd/hello
          env:
            - name: TARGET
              value: ` + target + "\n"
}

const kustomization = "resources:\n  - service.yaml\n  - config.yaml\n"
const configYAML = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello-config\ndata:\n  greeting: hi\n"

func createRepo(t *testing.T, ns, name, url string) {
	t.Helper()
	repo := &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       knitv1alpha1.GitRepositorySpec{URL: url, Interval: metav1.Duration{Duration: 3600e9}},
	}
	if err := k8s.Create(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
}

func getService(ctx context.Context, ns, name string) (*servingv1.Service, error) {
	svc := &servingv1.Service{}
	return svc, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc)
}

// waitTemplate waits until Service hello's template has the revision name.
func waitTemplate(t *testing.T, ns, want string) *servingv1.Service {
	t.Helper()
	var svc *servingv1.Service
	eventually(t, "Service hello stamped "+want, func(ctx context.Context) (bool, string) {
		var err error
		if svc, err = getService(ctx, ns, "hello"); err != nil {
			return false, err.Error()
		}
		return svc.Spec.Template.Name == want, "template name " + svc.Spec.Template.Name
	})
	return svc
}

func repoCondition(ctx context.Context, ns, name string, typ duckv1.ConditionType) (*duckv1.Condition, *knitv1alpha1.GitRepository) {
	repo := &knitv1alpha1.GitRepository{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, repo); err != nil {
		return nil, nil
	}
	return repo.Status.GetCondition(typ), repo
}

func TestCommitsBecomeRevisions(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	first := g.commit("Say hello", map[string]string{"kustomization.yaml": kustomization, "service.yaml": serviceYAML("World"), "config.yaml": configYAML})
	createRepo(t, ns, "hello", g.dir)

	svc := waitTemplate(t, ns, "hello-"+first[:7])
	if svc.Labels[plan.RepositoryLabel] != "hello" || svc.Labels[plan.BranchLabel] != "main" || svc.Annotations[plan.CommitAnnotation] != first {
		t.Errorf("Service labels %v annotations %v, want repository, branch and commit", svc.Labels, svc.Annotations)
	}
	if a := svc.Spec.Template.Annotations; a[plan.CommitAnnotation] != first || a[plan.AuthorAnnotation] != "Ada <ada@example.com>" || a[plan.MessageAnnotation] != "Say hello" {
		t.Errorf("template annotations = %v, want the commit's SHA, author and message", a)
	}
	eventually(t, "GitRepository synced", func(ctx context.Context) (bool, string) {
		c, repo := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
		if c == nil || !c.IsTrue() || len(repo.Status.Branches) != 1 || repo.Status.Branches[0].AppliedCommit != first {
			return false, fmt.Sprintf("%+v", repo)
		}
		return len(repo.Status.Inventory) == 2, fmt.Sprintf("inventory %v", repo.Status.Inventory)
	})

	t.Run("a commit that does not touch the template keeps the revision", func(t *testing.T) {
		docs := g.commit("Docs", map[string]string{"README.md": "# hello\n"})
		trigger(ns, "hello")
		eventually(t, "Service records the docs commit", func(ctx context.Context) (bool, string) {
			svc, err := getService(ctx, ns, "hello")
			if err != nil {
				return false, err.Error()
			}
			return svc.Annotations[plan.CommitAnnotation] == docs, svc.Annotations[plan.CommitAnnotation]
		})
		waitTemplate(t, ns, "hello-"+first[:7])
	})

	t.Run("a code change stamps a new revision of a Service built from the repository", func(t *testing.T) {
		code := g.commit("Change the code", map[string]string{"cmd/hello/main.go": "package main\n\nfunc main() {}\n"})
		trigger(ns, "hello")
		waitTemplate(t, ns, "hello-"+code[:7])
	})

	t.Run("a template change stamps a new revision and a removed object is pruned", func(t *testing.T) {
		second := g.commit("Greet knit", map[string]string{"service.yaml": serviceYAML("knit"), "config.yaml": "", "kustomization.yaml": "resources:\n  - service.yaml\n"})
		trigger(ns, "hello")
		svc := waitTemplate(t, ns, "hello-"+second[:7])
		if env := svc.Spec.Template.Spec.Containers[0].Env; env[0].Value != "knit" {
			t.Errorf("env = %v", env)
		}
		eventually(t, "ConfigMap pruned", func(ctx context.Context) (bool, string) {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-config"}, &corev1.ConfigMap{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	})

	t.Run("a bad commit is reported and changes nothing", func(t *testing.T) {
		before, err := getService(context.Background(), ns, "hello")
		if err != nil {
			t.Fatal(err)
		}
		bad := g.commit("Break the YAML", map[string]string{"service.yaml": "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: [oops\n"})
		trigger(ns, "hello")
		eventually(t, "Synced=False naming the commit", func(ctx context.Context) (bool, string) {
			c, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
			if c == nil {
				return false, "no condition"
			}
			return c.IsFalse() && strings.Contains(c.Message, bad[:7]) && strings.Contains(c.Message, "service.yaml") &&
				strings.Contains(c.Message, "Break the YAML"), c.Message
		})
		after, err := getService(context.Background(), ns, "hello")
		if err != nil || after.Spec.Template.Name != before.Spec.Template.Name || after.Generation != before.Generation {
			t.Errorf("Service changed by a bad commit: %s → %s (%v)", before.Spec.Template.Name, after.Spec.Template.Name, err)
		}
		if got := announced.about("hello"); len(got) == 0 || !strings.Contains(got[len(got)-1], bad) {
			t.Errorf("announced failures = %v, want one for %s", got, bad)
		}
	})
}

func TestAnotherBranchIsItsOwnService(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	g.commit("main", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("main")})
	g.git("checkout", "-qb", "staging")
	staging := g.commit("staging", map[string]string{"service.yaml": serviceYAML("staging")})
	repo := &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec:       knitv1alpha1.GitRepositorySpec{URL: g.dir, Branches: []string{"main", "staging"}, Interval: metav1.Duration{Duration: 3600e9}},
	}
	if err := k8s.Create(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hello-staging applied", func(ctx context.Context) (bool, string) {
		svc, err := getService(ctx, ns, "hello-staging")
		if err != nil {
			return false, err.Error()
		}
		return svc.Spec.Template.Name == "hello-staging-"+staging[:7] && svc.Spec.Template.Spec.Containers[0].Env[0].Value == "staging", svc.Spec.Template.Name
	})
	waitTemplate(t, ns, "hello-"+g.git("rev-parse", "main")[:7])
}

func TestPullRequestCanary(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	g.commit("main", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("main")})
	g.git("checkout", "-qb", "feature")
	head := g.commit("feature", map[string]string{"service.yaml": serviceYAML("feature")})
	g.git("checkout", "-q", "main")
	createRepo(t, ns, "hello", g.dir)
	pr := &knitv1alpha1.PullRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello-1"},
		Spec: knitv1alpha1.PullRequestSpec{Repository: "hello", Number: 1, HeadBranch: "feature", BaseBranch: "main",
			State: knitv1alpha1.PullRequestOpen, CanaryPercent: 20},
	}
	if err := k8s.Create(context.Background(), pr); err != nil {
		t.Fatal(err)
	}
	preview := "hello-pr1-" + head[:7]
	rev := &servingv1.Revision{}
	eventually(t, "preview Revision stamped from the head", func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: preview}, rev)
		return err == nil, fmt.Sprint(err)
	})
	if rev.Spec.Containers[0].Env[0].Value != "feature" || rev.Labels[plan.PullRequestLabel] != "1" || rev.Annotations[plan.CommitAnnotation] != head {
		t.Errorf("preview = %+v", rev.ObjectMeta)
	}
	// The pass that stamps the preview applies the base Service too; the
	// preview may be written first.
	var svc *servingv1.Service
	eventually(t, "Service hello applied", func(ctx context.Context) (bool, string) {
		var err error
		svc, err = getService(ctx, ns, "hello")
		return err == nil, fmt.Sprint(err)
	})
	for _, tg := range svc.Spec.Traffic {
		if tg.Tag == "pr-1" {
			t.Errorf("traffic %v routes to the preview before it is ready", svc.Spec.Traffic)
		}
	}
	eventually(t, "the preview recorded deploying", func(ctx context.Context) (bool, string) {
		_, repo := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
		return repo != nil && len(repo.Status.Previews) == 1 && repo.Status.Previews[0].Phase == knitv1alpha1.PreviewDeploying,
			fmt.Sprintf("%+v", repo)
	})

	// No runtime here: say the preview got ready, as the Revision reconciler would.
	rev.Status.Conditions = []duckv1.Condition{{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue}}
	if err := k8s.Status().Update(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the preview recorded ready", func(ctx context.Context) (bool, string) {
		_, repo := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
		if repo == nil {
			return false, "no repository"
		}
		want := knitv1alpha1.PreviewStatus{Number: 1, Commit: head, Phase: knitv1alpha1.PreviewReady, RevisionNames: []string{preview}, BaseService: "hello"}
		return len(repo.Status.Previews) == 1 && equality.Semantic.DeepEqual(repo.Status.Previews[0], want), fmt.Sprintf("%+v", repo.Status.Previews)
	})
	eventually(t, "canary of 20% with tag pr-1", func(ctx context.Context) (bool, string) {
		svc, err := getService(ctx, ns, "hello")
		if err != nil {
			return false, err.Error()
		}
		for _, tg := range svc.Spec.Traffic {
			if tg.Tag == "pr-1" && tg.RevisionName == preview && ptr.Deref(tg.Percent, 0) == 20 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("traffic %+v", svc.Spec.Traffic)
	})

	// Read again when the controller's status write got in first.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pr), pr); err != nil {
			return err
		}
		pr.Spec.State = knitv1alpha1.PullRequestClosed
		return k8s.Update(context.Background(), pr)
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "closing removes the tag, the traffic and the preview", func(ctx context.Context) (bool, string) {
		svc, err := getService(ctx, ns, "hello")
		if err != nil {
			return false, err.Error()
		}
		if len(svc.Spec.Traffic) != 0 {
			return false, fmt.Sprintf("traffic %+v", svc.Spec.Traffic)
		}
		err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: preview}, &servingv1.Revision{})
		return apierrors.IsNotFound(err), fmt.Sprint("preview: ", err)
	})
	eventually(t, "the closed pull request's preview is no longer recorded", func(ctx context.Context) (bool, string) {
		_, repo := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
		return repo != nil && len(repo.Status.Previews) == 0, fmt.Sprintf("%+v", repo)
	})
	// The PullRequest reconciler (not running here) says it is closed:
	// its status has no other writer.
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pr), pr); err != nil {
		t.Fatal(err)
	}
	for _, f := range pr.ManagedFields {
		if f.Subresource == "status" {
			t.Errorf("PullRequest status written by %s (%s): only its own reconciler may", f.Manager, f.Operation)
		}
	}
}
