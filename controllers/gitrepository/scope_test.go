//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// waitRejected waits until Synced is False for commit sha with a message
// holding every one of want.
func waitRejected(t *testing.T, ns, sha string, want ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("Synced=False for %.7s saying %q", sha, want), func(ctx context.Context) (bool, string) {
		c, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
		if c == nil || !c.IsFalse() || !strings.Contains(c.Message, sha[:7]) {
			return false, fmt.Sprintf("%+v", c)
		}
		for _, w := range want {
			if !strings.Contains(c.Message, w) {
				return false, c.Message
			}
		}
		return true, ""
	})
	if c, _ := repoCondition(context.Background(), ns, "hello", knitv1alpha1.GitRepositoryConditionSynced); c != nil {
		t.Logf("Synced %s %s: %s", c.Status, c.Reason, c.Message)
	}
}

// A commit may deploy only the kinds its GitRepository allows, and never
// a GitRepository (one pointing at an attacker with an existing Secret
// would send the Secret there) or a Secret: such a commit changes
// nothing, the previous commit keeps serving, and Synced says what to do.
func TestCommitsDeployOnlyAllowedKinds(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"},
		Data: map[string][]byte{"username": []byte("ada"), "password": []byte("s3cret")}}
	if err := k8s.Create(ctx, creds); err != nil {
		t.Fatal(err)
	}
	g := newGitRepo(t)
	first := g.commit("Say hello", map[string]string{"kustomization.yaml": kustomization, "service.yaml": serviceYAML("World"), "config.yaml": configYAML})
	createRepo(t, ns, "hello", g.dir)
	waitTemplate(t, ns, "hello-"+first[:7])

	for _, tc := range []struct {
		name, file, doc string
		obj             client.Object
		want            []string
	}{
		{
			name: "a GitRepository that would steal a Secret", file: "steal.yaml",
			doc:  "apiVersion: knit.dev/v1alpha1\nkind: GitRepository\nmetadata:\n  name: steal\nspec:\n  url: http://127.0.0.1:1/steal.git\n  secretRef:\n    name: creds\n",
			obj:  &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "steal"}},
			want: []string{"GitRepository.knit.dev steal", "never deployed from Git"},
		},
		{
			name: "a Secret", file: "secret.yaml",
			doc:  "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: overwritten\n",
			obj:  &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}},
			want: []string{"Secret creds", "a Secret in Git must be SOPS-encrypted", "plain-text Secrets are never deployed"},
		},
		{
			name: "RBAC", file: "rbac.yaml",
			doc:  "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: admin\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}\nsubjects: [{kind: User, name: mallory}]\n",
			obj:  &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admin"}},
			want: []string{"RoleBinding.rbac.authorization.k8s.io admin", "never deployed from Git"},
		},
		{
			name: "a kind the repository does not allow", file: "sa.yaml",
			doc:  "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n",
			obj:  &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "robot"}},
			want: []string{"ServiceAccount robot", `add "ServiceAccount" to spec.allowedKinds of GitRepository ` + ns + "/hello"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := getService(ctx, ns, "hello")
			if err != nil {
				t.Fatal(err)
			}
			bad := g.commit("Add "+tc.file, map[string]string{
				tc.file: tc.doc, "service.yaml": serviceYAML(tc.file),
				"kustomization.yaml": "resources:\n  - service.yaml\n  - config.yaml\n  - " + tc.file + "\n",
			})
			trigger(ns, "hello")
			waitRejected(t, ns, bad, tc.want...)
			after, err := getService(ctx, ns, "hello")
			if err != nil || after.Generation != before.Generation || after.Spec.Template.Name != before.Spec.Template.Name {
				t.Errorf("Service changed by a refused commit: %s → %s (%v)", before.Spec.Template.Name, after.Spec.Template.Name, err)
			}
			got := tc.obj.DeepCopyObject().(client.Object)
			err = k8s.Get(ctx, client.ObjectKeyFromObject(tc.obj), got)
			switch s := got.(type) {
			case *corev1.Secret:
				if err != nil || string(s.Data["password"]) != "s3cret" {
					t.Errorf("Secret creds after a refused commit: %v %q, want untouched", err, s.Data["password"])
				}
			default:
				if !apierrors.IsNotFound(err) {
					t.Errorf("%s created by a refused commit (get: %v)", tc.file, err)
				}
			}
			g.commit("Drop "+tc.file, map[string]string{tc.file: "", "kustomization.yaml": kustomization})
		})
	}

	t.Run("a kind listed in spec.allowedKinds is deployed", func(t *testing.T) {
		sa := g.commit("Add a ServiceAccount", map[string]string{"sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n",
			"kustomization.yaml": "resources:\n  - service.yaml\n  - config.yaml\n  - sa.yaml\n"})
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			repo := &knitv1alpha1.GitRepository{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, repo); err != nil {
				return err
			}
			repo.Spec.AllowedKinds = []string{"Service.serving.knative.dev", "ConfigMap", "ServiceAccount"}
			return k8s.Update(ctx, repo)
		}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "ServiceAccount robot applied", func(ctx context.Context) (bool, string) {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "robot"}, &corev1.ServiceAccount{})
			return err == nil, fmt.Sprint(err)
		})
		waitTemplate(t, ns, "hello-"+sa[:7])
	})
}

// With spec.serviceAccountName a sync writes as that ServiceAccount: one
// that may not create Services gets the API server's Forbidden as the
// condition, and nothing is applied; granted the rights, it deploys.
func TestSyncAppliesAsItsServiceAccount(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	for _, o := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "patch", "delete"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "deployer"}}},
	} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	g := newGitRepo(t)
	sha := g.commit("Say hello", map[string]string{"kustomization.yaml": kustomization, "service.yaml": serviceYAML("World"), "config.yaml": configYAML})
	repo := &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec:       knitv1alpha1.GitRepositorySpec{URL: g.dir, Interval: metav1.Duration{Duration: 3600e9}, ServiceAccountName: "deployer"},
	}
	if err := k8s.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	waitRejected(t, ns, sha, "forbidden", "system:serviceaccount:"+ns+":deployer", "services", "spec.serviceAccountName")
	if c, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced); c == nil || c.Reason != ReasonForbidden {
		t.Errorf("Synced = %+v, want reason %s", c, ReasonForbidden)
	}
	if _, err := getService(ctx, ns, "hello"); !apierrors.IsNotFound(err) {
		t.Errorf("Service hello exists although its ServiceAccount may not create it (get: %v)", err)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-config"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap applied although the commit's Service was refused (get: %v)", err)
	}

	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		role := &rbacv1.Role{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "deployer"}, role); err != nil {
			return err
		}
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"serving.knative.dev"}, Resources: []string{"services"},
			Verbs: []string{"get", "create", "patch", "delete"}})
		return k8s.Update(ctx, role)
	}); err != nil {
		t.Fatal(err)
	}
	trigger(ns, "hello")
	waitTemplate(t, ns, "hello-"+sha[:7])
}
