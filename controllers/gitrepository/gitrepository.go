package gitrepository

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/controllers/transition"
)

// defaultInterval is the poll period when spec.interval is unset.
const defaultInterval = time.Minute

// fetchEvents and syncEvents are the repository's transitions `kubectl
// describe` shows beside its builds' (build.go): a fetch failing (the
// remote, its credentials, egress), a sync failing (a commit refused, with
// what was refused) and the sync succeeding again.
var (
	fetchEvents = transition.Events{Condition: knitv1alpha1.GitRepositoryConditionFetched, Action: "Fetch", False: "FetchFailed"}
	syncEvents  = transition.Events{Condition: knitv1alpha1.GitRepositoryConditionSynced, Action: "Sync",
		True: "Synced", TrueNote: "the latest commit of every tracked branch is applied", False: "SyncFailed"}
)

// Reconcile runs one pass for a GitRepository, three phases each doing
// only its own work (see the package doc): fetch when the last fetch may
// be out of date, render and apply when what they read changed, and
// always the cheap status roll-up, then the knit/deploy status of each
// branch's head where it moved.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	repo := &knitv1alpha1.GitRepository{}
	if err := r.client.Get(ctx, req.NamespacedName, repo); err != nil {
		if apierrors.IsNotFound(err) {
			r.memory.forget(req.NamespacedName)
			forgetMetrics(req.Namespace, req.Name)
			return ctrl.Result{}, r.cache.Forget(cacheKey(req.NamespacedName))
		}
		return ctrl.Result{}, err
	}
	if repo.DeletionTimestamp != nil {
		return ctrl.Result{}, r.finalize(ctx, repo)
	}
	if err := r.ensureFinalizer(ctx, repo); err != nil {
		return ctrl.Result{}, err
	}
	if repo.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	st := r.memory.get(req.NamespacedName)
	if r.memory.takeTrigger(req.NamespacedName) {
		st.refetch = true
	}
	before := repo.Status.DeepCopy()
	repo.Status.InitializeConditions()
	repo.Status.ObservedGeneration = repo.Generation

	prs, done, stepAfter, err := r.sync(ctx, repo, &st)
	var forgeErr error
	if err == nil {
		// After the roll-up, before the status write that records it.
		forgeErr = r.reportDeploys(ctx, repo, &st)
	}
	if !equality.Semantic.DeepEqual(before, &repo.Status) {
		if uerr := r.client.Status().Update(ctx, repo); uerr != nil {
			err = errors.Join(err, fmt.Errorf("update status of GitRepository %s: %w", req, uerr))
		} else {
			fetchEvents.Record(r.events, repo, &before.Status, &repo.Status.Status)
			syncEvents.Record(r.events, repo, &before.Status, &repo.Status.Status)
		}
	}
	// An apply counts once its branches and inventory are in the status:
	// until then the next pass applies again.
	if err == nil && done != nil {
		st.applied = done
	}
	r.memory.put(req.NamespacedName, st)
	if err != nil {
		return ctrl.Result{}, err
	}
	if r.passed != nil {
		r.passed(repo, prs)
	}
	if forgeErr != nil {
		// Retried with backoff; what was applied counts regardless.
		return ctrl.Result{}, forgeErr
	}
	after := st.nextPoll(repo, r.now())
	if stepAfter > 0 && stepAfter < after {
		after = stepAfter
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// sync runs the phases that may change the repository's status: fetch,
// the rollouts' steps, render and apply (which records the previews of
// pull requests), and the roll-ups. It returns the pull requests it read,
// what it applied (nil when nothing changed) and when a rollout needs its
// next look (0 for none), and an error only for what a retry may cure.
func (r *Reconciler) sync(ctx context.Context, repo *knitv1alpha1.GitRepository, st *remembered) ([]knitv1alpha1.PullRequest, *applied, time.Duration, error) {
	prs, err := r.pullRequests(ctx, repo)
	if err != nil {
		return nil, nil, 0, err
	}
	if err := r.fetchIfDue(ctx, repo, prs, st); err != nil {
		return nil, nil, 0, err
	}
	stepAfter := r.stepRollouts(ctx, repo)
	done, err := r.applyIfChanged(ctx, repo, prs, st)
	if err != nil {
		return nil, nil, 0, err
	}
	st.markTooLarge(repo)
	markRollouts(repo)
	return prs, done, stepAfter, r.markRevisions(ctx, repo)
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
	return repo.Spec.TrackedBranches()
}

// previewed are the pull requests into tracked branches: the ones a
// pass previews, and those closed it cleans up after.
func previewed(repo *knitv1alpha1.GitRepository, prs []knitv1alpha1.PullRequest) []knitv1alpha1.PullRequest {
	var out []knitv1alpha1.PullRequest
	for _, pr := range prs {
		if slices.Contains(trackedBranches(repo), pr.Spec.BaseBranch) {
			out = append(out, pr)
		}
	}
	return out
}

func cacheKey(key types.NamespacedName) string { return key.Namespace + "/" + key.Name }
