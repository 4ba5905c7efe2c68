//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// Deleting a GitRepository follows spec.deletionPolicy: by default
// (Delete) what it applied goes with it, once it is gone the repository
// is too; Orphan leaves what it applied running; either way the
// repository carries the finalizer from its first pass.
func TestDeletionPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy   knitv1alpha1.DeletionPolicy
		survives bool
	}{
		{policy: "", survives: false},
		{policy: knitv1alpha1.DeletionPolicyDelete, survives: false},
		{policy: knitv1alpha1.DeletionPolicyOrphan, survives: true},
	} {
		t.Run(fmt.Sprintf("policy %q", tc.policy), func(t *testing.T) {
			ns := newNamespace(t)
			g := newGitRepo(t)
			g.commit("main", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("main")})
			repo := &knitv1alpha1.GitRepository{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
				Spec:       knitv1alpha1.GitRepositorySpec{URL: g.dir, Interval: metav1.Duration{Duration: 3600e9}, DeletionPolicy: tc.policy},
			}
			ctx := context.Background()
			if err := k8s.Create(ctx, repo); err != nil {
				t.Fatal(err)
			}
			waitTemplate(t, ns, "hello-"+g.git("rev-parse", "main")[:7])
			eventually(t, "the finalizer and the inventory", func(ctx context.Context) (bool, string) {
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(repo), repo); err != nil {
					return false, err.Error()
				}
				return len(repo.Finalizers) == 1 && repo.Finalizers[0] == knitv1alpha1.GitRepositoryFinalizer && len(repo.Status.Inventory) > 0,
					fmt.Sprintf("finalizers %v, inventory %v", repo.Finalizers, repo.Status.Inventory)
			})

			if err := k8s.Delete(ctx, repo); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the GitRepository gone", func(ctx context.Context) (bool, string) {
				err := k8s.Get(ctx, client.ObjectKeyFromObject(repo), &knitv1alpha1.GitRepository{})
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			svc, err := getService(ctx, ns, "hello")
			gone := apierrors.IsNotFound(err) || (err == nil && svc.DeletionTimestamp != nil)
			if tc.survives == gone {
				t.Errorf("deletionPolicy %q: Service hello after the repository's deletion: %v (deleting: %v), want it kept: %v",
					tc.policy, err, err == nil && svc.DeletionTimestamp != nil, tc.survives)
			}
		})
	}
}
