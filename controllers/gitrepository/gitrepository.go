package gitrepository

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// defaultInterval is the poll period when spec.interval is unset.
const defaultInterval = time.Minute

// Reconcile runs one sync pass for a GitRepository; see the package doc.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	repo := &knitv1alpha1.GitRepository{}
	if err := r.client.Get(ctx, req.NamespacedName, repo); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.cache.Forget(cacheKey(req.NamespacedName))
		}
		return ctrl.Result{}, err
	}
	if repo.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	before := repo.Status.DeepCopy()
	conds := knitv1alpha1.GitRepositoryConditions.Manage(&repo.Status.Status)
	conds.InitializeConditions()
	repo.Status.ObservedGeneration = repo.Generation

	err := r.sync(ctx, repo)
	if !equality.Semantic.DeepEqual(before, &repo.Status) {
		if uerr := r.client.Status().Update(ctx, repo); uerr != nil {
			return ctrl.Result{}, errors.Join(err, fmt.Errorf("update status of GitRepository %s: %w", req, uerr))
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: interval(repo)}, nil
}

// sync is the pass: fetch, then each branch, then prune and status. It
// returns an error only for what a retry may cure.
func (r *Reconciler) sync(ctx context.Context, repo *knitv1alpha1.GitRepository) error {
	conds := knitv1alpha1.GitRepositoryConditions.Manage(&repo.Status.Status)
	prs, err := r.pullRequests(ctx, repo)
	if err != nil {
		return err
	}
	auth, err := r.auth(ctx, repo)
	if err != nil {
		conds.MarkFalse(knitv1alpha1.GitRepositoryConditionFetched, "CredentialsNotFound", err.Error())
		return err
	}
	fetched, err := r.cache.Fetch(ctx, cacheKey(client.ObjectKeyFromObject(repo)), repo.Spec.URL, fetchList(repo, prs), auth)
	if err != nil {
		conds.MarkFalse(knitv1alpha1.GitRepositoryConditionFetched, "FetchFailed", err.Error())
		return err
	}
	conds.MarkTrue(knitv1alpha1.GitRepositoryConditionFetched)

	p := &pass{r: r, repo: repo, fetched: fetched, prs: prs, previews: map[string]bool{}}
	for i, branch := range trackedBranches(repo) {
		if err := p.branch(ctx, branch, i == 0); err != nil {
			return err
		}
	}
	if err := p.prune(ctx); err != nil {
		return err
	}
	p.markSynced()
	if err := r.updatePullRequests(ctx, p); err != nil {
		return err
	}
	return r.markRevisions(ctx, repo)
}

// auth reads the credentials Secret, if the repository names one.
func (r *Reconciler) auth(ctx context.Context, repo *knitv1alpha1.GitRepository) (transport.AuthMethod, error) {
	if repo.Spec.SecretRef == nil {
		return nil, nil
	}
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: repo.Namespace, Name: repo.Spec.SecretRef.Name}
	if err := r.reader.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("credentials Secret %s: %w", key, err)
	}
	return gitsource.AuthFromSecret(secret.Data), nil
}

func (r *Reconciler) pullRequests(ctx context.Context, repo *knitv1alpha1.GitRepository) ([]knitv1alpha1.PullRequest, error) {
	list := &knitv1alpha1.PullRequestList{}
	if err := r.client.List(ctx, list, client.InNamespace(repo.Namespace)); err != nil {
		return nil, fmt.Errorf("list PullRequests: %w", err)
	}
	var out []knitv1alpha1.PullRequest
	for _, pr := range list.Items {
		if pr.Spec.Repository == repo.Name {
			out = append(out, pr)
		}
	}
	return out, nil
}

// trackedBranches are spec.branches, main when none; the first is the
// main branch.
func trackedBranches(repo *knitv1alpha1.GitRepository) []string {
	if len(repo.Spec.Branches) == 0 {
		return []string{"main"}
	}
	return repo.Spec.Branches
}

// fetchList is every branch a pass reads: the tracked ones and the heads
// of open pull requests.
func fetchList(repo *knitv1alpha1.GitRepository, prs []knitv1alpha1.PullRequest) []string {
	seen := map[string]bool{}
	var out []string
	add := func(b string) {
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	for _, b := range trackedBranches(repo) {
		add(b)
	}
	for _, pr := range prs {
		if pr.Spec.State == knitv1alpha1.PullRequestOpen || pr.Spec.State == "" {
			add(pr.Spec.HeadBranch)
		}
	}
	return out
}

func interval(repo *knitv1alpha1.GitRepository) time.Duration {
	if d := repo.Spec.Interval.Duration; d > 0 {
		return d
	}
	return defaultInterval
}

func cacheKey(key types.NamespacedName) string { return key.Namespace + "/" + key.Name }
