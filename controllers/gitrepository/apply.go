package gitrepository

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
)

// apply server-side applies objs with repo's identity (writer), all of
// them as a dry run first: if the API, the identity's RBAC or an admission
// webhook refuses any, nothing is changed and the error names the object.
func (r *Reconciler) apply(ctx context.Context, repo *knitv1alpha1.GitRepository, objs []*unstructured.Unstructured) error {
	w, err := r.writer(repo)
	if err != nil {
		return err
	}
	if err := checkSecretsOwned(ctx, w, repo, objs); err != nil {
		return err
	}
	for _, dry := range []bool{true, false} {
		for _, o := range objs {
			opts := []client.ApplyOption{fieldOwner, client.ForceOwnership}
			if dry {
				opts = append(opts, client.DryRunAll)
			}
			if err := w.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), opts...); err != nil {
				return asIdentity(repo, fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err))
			}
		}
	}
	return nil
}

// prune deletes what the repository applied before and a later commit
// removed, and previews no open pull request wants: preview Services and
// copies, which are in the inventory, and preview Revisions, except
// while a branch failed: the next good commit prunes those.
func (p *pass) prune(ctx context.Context) error {
	keep := map[knitv1alpha1.ObjectReference]bool{}
	for _, ref := range p.inventory {
		keep[ref] = true
	}
	for _, ref := range p.previewRefs {
		if !keep[ref] { // a failed base branch kept it already
			keep[ref] = true
			p.inventory = append(p.inventory, ref)
		}
	}
	var errs []error
	for _, ref := range p.repo.Status.Inventory {
		if keep[ref] {
			continue
		}
		errs = append(errs, p.r.remove(ctx, p.repo, ref))
	}
	p.repo.Status.Inventory = p.inventory
	if len(p.failed) == 0 {
		errs = append(errs, p.prunePreviews(ctx))
	}
	return errors.Join(errs...)
}

// remove deletes one object of repo's inventory; a preview object only
// while it is still its pull request's (ownsPreview).
func (r *Reconciler) remove(ctx context.Context, repo *knitv1alpha1.GitRepository, ref knitv1alpha1.ObjectReference) error {
	if ref.PullRequest != 0 {
		owned, err := r.ownsPreview(ctx, repo, ref)
		if err != nil || !owned {
			return err
		}
	}
	w, err := r.writer(repo)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(ref.APIVersion)
	u.SetKind(ref.Kind)
	u.SetNamespace(ref.Namespace)
	u.SetName(ref.Name)
	log.FromContext(ctx).Info("Pruning object a later commit removed", "kind", ref.Kind, "name", ref.Name, "branch", ref.Branch)
	if err := w.Delete(ctx, u, client.PropagationPolicy("Background")); err != nil && !apierrors.IsNotFound(err) {
		return asIdentity(repo, fmt.Errorf("prune %s %s: %w", ref.Kind, ref.Name, err))
	}
	return nil
}

// prunePreviews deletes preview Revisions of closed, merged or updated
// pull requests, now that no traffic points at them.
func (p *pass) prunePreviews(ctx context.Context) error {
	revs := &servingv1.RevisionList{}
	if err := p.r.client.List(ctx, revs, client.InNamespace(p.repo.Namespace),
		client.MatchingLabels{plan.RepositoryLabel: p.repo.Name}, client.HasLabels{plan.PullRequestLabel}); err != nil {
		return fmt.Errorf("list preview Revisions: %w", err)
	}
	w, err := p.r.writer(p.repo)
	if err != nil {
		return err
	}
	var errs []error
	for i := range revs.Items {
		rev := &revs.Items[i]
		if p.previews[rev.Name] {
			continue
		}
		log.FromContext(ctx).Info("Deleting preview Revision", "revision", rev.Name, "pullRequest", rev.Labels[plan.PullRequestLabel])
		if err := w.Delete(ctx, rev, client.PropagationPolicy("Background")); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, asIdentity(p.repo, fmt.Errorf("delete preview Revision %s: %w", rev.Name, err)))
		}
	}
	return errors.Join(errs...)
}
