//go:build !unit

package gitrepository

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// A GitRepository naming no ServiceAccount writes as the namespace's
// default GitOps ServiceAccount, never as knit's ClusterRole: in a
// namespace where that account may write ConfigMaps only (a RoleBinding
// in another namespace granting it more changes nothing), a commit's
// Service is refused with a condition that says whose rights were
// lacking and how to grant them, and nothing is applied.
func TestSyncWithoutServiceAccountWritesAsTheDefault(t *testing.T) {
	ctx := context.Background()
	other := newNamespace(t)
	ns := newBareNamespace(t)
	for _, o := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: defaultServiceAccount}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "patch", "delete"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmaps"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: defaultServiceAccount}}},
		// Rights in another namespace are no rights here.
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "from-" + ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: gitopsRole.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: defaultServiceAccount}}},
	} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	g := newGitRepo(t)
	sha := g.commit("Say hello", map[string]string{"kustomization.yaml": kustomization, "service.yaml": serviceYAML("World"), "config.yaml": configYAML})
	createRepo(t, ns, "hello", g.dir)
	waitRejected(t, ns, sha, "forbidden", "system:serviceaccount:"+ns+":"+defaultServiceAccount, "services",
		"names no spec.serviceAccountName", "--gitops-default-service-account", "bind it a Role")
	if c, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced); c == nil || c.Reason != ReasonForbidden {
		t.Errorf("Synced = %+v, want reason %s", c, ReasonForbidden)
	}
	if _, err := getService(ctx, ns, "hello"); !apierrors.IsNotFound(err) {
		t.Errorf("Service hello exists although the default ServiceAccount may not create it (get: %v)", err)
	}
	if _, err := getService(ctx, other, "hello"); !apierrors.IsNotFound(err) {
		t.Errorf("Service hello exists in %s (get: %v)", other, err)
	}
}

// spec.allowedKinds can only narrow the operator's ceiling: a
// GitRepository listing a kind beyond it deploys none of it, and Synced
// says that the operator, not the repository, decides.
func TestAllowedKindsCannotWidenTheCeiling(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	g := newGitRepo(t)
	sha := g.commit("Add a Deployment", map[string]string{
		"kustomization.yaml": "resources:\n  - service.yaml\n  - config.yaml\n  - deploy.yaml\n",
		"service.yaml":       serviceYAML("World"), "config.yaml": configYAML,
		"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: miner\nspec:\n  selector: {matchLabels: {app: miner}}\n" +
			"  template:\n    metadata: {labels: {app: miner}}\n    spec:\n      containers: [{name: miner, image: example.com/miner}]\n",
	})
	repo := &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec: knitv1alpha1.GitRepositorySpec{URL: g.dir, Interval: metav1.Duration{Duration: 3600e9},
			AllowedKinds: []string{"Service.serving.knative.dev", "ConfigMap", "Deployment.apps"}},
	}
	if err := k8s.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	waitRejected(t, ns, sha, "Deployment.apps miner", "not among the kinds this cluster lets Git deploy", "can only narrow")
	if _, err := getService(ctx, ns, "hello"); !apierrors.IsNotFound(err) {
		t.Errorf("Service hello applied from a refused commit (get: %v)", err)
	}
}
