//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/decryption/sopstest"
	"github.com/knitops/knit/gitsync/plan"
	"github.com/knitops/knit/gitsync/render"
)

func secretYAML(name, password string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\nstringData:\n  password: " + password + "\n"
}

func encryptFor(t *testing.T, name, plain, recipient string) string {
	t.Helper()
	out, err := sopstest.Encrypt(name, []byte(plain), sopstest.KubernetesRegex, recipient)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A GitRepository with spec.decryption deploys the SOPS-encrypted Secrets
// of its commits decrypted, never takes over a Secret it did not deploy,
// and refuses a commit it cannot decrypt until its key Secret can.
func TestDecryptedSecrets(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	// As an operator grants Secrets through controller.gitopsRules.
	for _, o := range []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secrets"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create", "patch", "delete"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secrets"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "secrets"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: defaultServiceAccount}}},
	} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	key, recipient, err := sopstest.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sops-age"}, Data: map[string][]byte{"age.agekey": []byte(key)}}
	if err := k8s.Create(ctx, keys); err != nil {
		t.Fatal(err)
	}

	g := newGitRepo(t)
	first := g.commit("With a secret", map[string]string{
		"kustomization.yaml": "resources:\n  - service.yaml\n  - db.yaml\n",
		"service.yaml":       serviceYAML("World"),
		"db.yaml":            encryptFor(t, "db.yaml", secretYAML("db", "hunter2"), recipient),
	})
	repo := &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec: knitv1alpha1.GitRepositorySpec{URL: g.dir, Interval: metav1.Duration{Duration: 3600e9},
			Decryption: &knitv1alpha1.Decryption{Provider: knitv1alpha1.DecryptionProviderSOPS, SecretRef: corev1.LocalObjectReference{Name: "sops-age"}}},
	}
	if err := k8s.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	waitTemplate(t, ns, "hello-"+first[:7])
	db := &corev1.Secret{}
	eventually(t, "Secret db deployed decrypted", func(ctx context.Context) (bool, string) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, db); err != nil {
			return false, err.Error()
		}
		return string(db.Data["password"]) == "hunter2", fmt.Sprintf("data %q", db.Data)
	})
	if db.Annotations[render.DecryptedFromAnnotation] != "db.yaml" || db.Labels[plan.RepositoryLabel] != "hello" {
		t.Errorf("Secret db annotations %v labels %v, want where it was decrypted from and its repository", db.Annotations, db.Labels)
	}

	failsSaying := func(t *testing.T, sha string, want ...string) {
		t.Helper()
		trigger(ns, "hello")
		eventually(t, "Synced=False for "+sha[:7], func(ctx context.Context) (bool, string) {
			c, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
			if c == nil || !c.IsFalse() || !strings.Contains(c.Message, sha[:7]) {
				return false, fmt.Sprint(c)
			}
			for _, w := range want {
				if !strings.Contains(c.Message, w) {
					return false, c.Message
				}
			}
			if strings.Contains(c.Message, "hunter") {
				t.Errorf("the condition quotes a secret: %s", c.Message)
			}
			return true, ""
		})
		waitTemplate(t, ns, "hello-"+first[:7])
	}

	t.Run("a Secret a person made is not taken over", func(t *testing.T) {
		mine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "theirs"}, Data: map[string][]byte{"token": []byte("keep")}}
		if err := k8s.Create(ctx, mine); err != nil {
			t.Fatal(err)
		}
		sha := g.commit("Take theirs", map[string]string{
			"kustomization.yaml": "resources:\n  - service.yaml\n  - db.yaml\n  - theirs.yaml\n",
			"service.yaml":       serviceYAML("Take"),
			"theirs.yaml":        encryptFor(t, "theirs.yaml", secretYAML("theirs", "hunter3"), recipient),
		})
		failsSaying(t, sha, "Secret theirs already exists and was not deployed by GitRepository hello")
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(mine), mine); err != nil || string(mine.Data["token"]) != "keep" {
			t.Errorf("the person's Secret changed: %q, %v", mine.Data, err)
		}
	})

	t.Run("a plain-text Secret is refused", func(t *testing.T) {
		sha := g.commit("Plain", map[string]string{
			"kustomization.yaml": "resources:\n  - service.yaml\n  - db.yaml\n",
			"service.yaml":       serviceYAML("Plain"),
			"db.yaml":            secretYAML("db", "hunter4"),
		})
		failsSaying(t, sha, "Secret db: a Secret in Git must be SOPS-encrypted")
	})

	t.Run("a file for another key waits for that key", func(t *testing.T) {
		otherKey, other, err := sopstest.NewIdentity()
		if err != nil {
			t.Fatal(err)
		}
		sha := g.commit("Rotate", map[string]string{
			"service.yaml": serviceYAML("Rotated"),
			"db.yaml":      encryptFor(t, "db.yaml", secretYAML("db", "hunter5"), other),
		})
		failsSaying(t, sha, "db.yaml is encrypted for "+other, "Secret "+ns+"/sops-age holds identities for "+recipient)
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, db); err != nil || string(db.Data["password"]) != "hunter2" {
			t.Errorf("Secret db changed by a commit that failed: %q, %v", db.Data, err)
		}

		// The key Secret gains the new identity: the same commit applies,
		// with no push.
		keys.Data["new.agekey"] = []byte(otherKey)
		if err := k8s.Update(ctx, keys); err != nil {
			t.Fatal(err)
		}
		trigger(ns, "hello")
		waitTemplate(t, ns, "hello-"+sha[:7])
		eventually(t, "Secret db rotated", func(ctx context.Context) (bool, string) {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, db); err != nil {
				return false, err.Error()
			}
			return string(db.Data["password"]) == "hunter5", "not yet"
		})
	})
}
