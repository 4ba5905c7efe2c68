package gitrepository

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
)

// ensureFinalizer adds the finalizer that lets deletion follow
// spec.deletionPolicy. The pass goes on with repo as patched: the
// controller's predicates let a metadata-only change wake nothing.
func (r *Reconciler) ensureFinalizer(ctx context.Context, repo *knitv1alpha1.GitRepository) error {
	if controllerutil.ContainsFinalizer(repo, knitv1alpha1.GitRepositoryFinalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(repo.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(repo, knitv1alpha1.GitRepositoryFinalizer)
	if err := r.client.Patch(ctx, repo, patch); err != nil {
		return fmt.Errorf("add finalizer to GitRepository %s/%s: %w", repo.Namespace, repo.Name, err)
	}
	return nil
}

// finalize runs spec.deletionPolicy for a GitRepository being deleted,
// then lets it go. Delete removes every object of its inventory and its
// preview Revisions, as the repository's own identity, retrying until
// all are gone; Orphan leaves them. In a namespace being deleted there is
// nothing to do: Kubernetes deletes everything in it, and the identity a
// prune would write as may already be gone.
func (r *Reconciler) finalize(ctx context.Context, repo *knitv1alpha1.GitRepository) error {
	if !controllerutil.ContainsFinalizer(repo, knitv1alpha1.GitRepositoryFinalizer) {
		return nil
	}
	terminating, err := r.namespaceTerminating(ctx, repo.Namespace)
	if err != nil {
		return err
	}
	if repo.Spec.DeletionPolicy != knitv1alpha1.DeletionPolicyOrphan && !terminating {
		deleted, err := r.deleteDeployed(ctx, repo)
		if err != nil {
			r.events.Eventf(repo, nil, corev1.EventTypeWarning, "DeleteFailed", "Delete",
				"Deleting what this repository deployed: %v; retrying", err)
			return err
		}
		r.events.Eventf(repo, nil, corev1.EventTypeNormal, "Deleted", "Delete",
			"Deleted %d objects this repository deployed (deletionPolicy Delete)", deleted)
	}
	patch := client.MergeFromWithOptions(repo.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(repo, knitv1alpha1.GitRepositoryFinalizer)
	if err := r.client.Patch(ctx, repo, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer of GitRepository %s/%s: %w", repo.Namespace, repo.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("GitRepository deleted", "deletionPolicy", policyOf(repo), "namespaceTerminating", terminating)
	return nil
}

// policyOf is repo's deletion policy, the default spelled out.
func policyOf(repo *knitv1alpha1.GitRepository) knitv1alpha1.DeletionPolicy {
	if repo.Spec.DeletionPolicy == "" {
		return knitv1alpha1.DeletionPolicyDelete
	}
	return repo.Spec.DeletionPolicy
}

// deleteDeployed deletes repo's inventory and preview Revisions and says
// how many objects it asked to delete.
func (r *Reconciler) deleteDeployed(ctx context.Context, repo *knitv1alpha1.GitRepository) (int, error) {
	var errs []error
	n := 0
	for _, ref := range repo.Status.Inventory {
		if err := r.remove(ctx, repo, ref); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	revs := &servingv1.RevisionList{}
	if err := r.client.List(ctx, revs, client.InNamespace(repo.Namespace),
		client.MatchingLabels{plan.RepositoryLabel: repo.Name}, client.HasLabels{plan.PullRequestLabel}); err != nil {
		return n, errors.Join(append(errs, fmt.Errorf("list preview Revisions: %w", err))...)
	}
	w, err := r.writer(repo)
	if err != nil {
		return n, errors.Join(append(errs, err)...)
	}
	for i := range revs.Items {
		if err := w.Delete(ctx, &revs.Items[i], client.PropagationPolicy("Background")); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, asIdentity(repo, fmt.Errorf("delete preview Revision %s: %w", revs.Items[i].Name, err)))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// namespaceTerminating says whether namespace is being deleted.
func (r *Reconciler) namespaceTerminating(ctx context.Context, namespace string) (bool, error) {
	ns := &corev1.Namespace{}
	if err := r.reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("get Namespace %s: %w", namespace, err)
	}
	return ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating, nil
}
