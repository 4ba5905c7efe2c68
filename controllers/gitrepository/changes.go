package gitrepository

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
)

// resyncPeriod is how often an unchanged repository is applied again
// anyway, to undo drift nothing announces (an object edited or deleted
// by hand), as Flux's kustomize-controller does at its interval: never
// more often than spec.interval.
const resyncPeriod = 10 * time.Minute

// resync is how long an unchanged repository goes between applies.
func resync(repo *knitv1alpha1.GitRepository) time.Duration {
	return max(resyncPeriod, interval(repo))
}

// applied is what a render and apply pass left, for the memory.
type applied struct {
	key string
	at  time.Time
	// services are the Services it applied, by name: one of them deleted
	// is drift to undo at once.
	services []string
}

// applyIfChanged is the render and apply phase: it renders, applies and
// prunes only when applyKey moved since the last apply (or a Service of
// it was deleted, or the resync is due), and sets Synced and the branch
// statuses when it does. It returns what it applied, nil when it
// skipped.
func (r *Reconciler) applyIfChanged(ctx context.Context, repo *knitv1alpha1.GitRepository, prs []knitv1alpha1.PullRequest, st *remembered) (*applied, error) {
	keys, err := r.readKeySecrets(ctx, repo)
	if err != nil {
		return nil, err
	}
	key, err := r.applyKey(ctx, repo, st.fetched.Heads, prs, keys)
	if err != nil {
		return nil, err
	}
	reason, err := r.applyReason(ctx, repo, st, key)
	if reason == "" || err != nil {
		return nil, err
	}
	log.FromContext(ctx).V(1).Info("Applying", "reason", reason)
	appliesTotal.WithLabelValues(repo.Namespace, repo.Name).Inc()
	p := &pass{r: r, repo: repo, fetched: st.fetched, prs: prs, keys: keys, previews: map[string]bool{}}
	for i, branch := range trackedBranches(repo) {
		if err := p.branch(ctx, branch, i == 0); err != nil {
			return nil, err
		}
	}
	if err := p.prune(ctx); err != nil {
		return nil, err
	}
	p.keepRollouts()
	p.markSynced()
	// Whether it counts as applied or waits for builds, the pass found
	// what each preview is: deploying ones included.
	repo.Status.Previews = p.previewStatuses()
	if len(p.building) > 0 || p.previewsBuilding || p.lacksRights {
		// Not remembered as applied: the build Job finishing wakes the
		// repository, and that pass applies what was built; rights
		// granted to the repository's ServiceAccount are used at the next
		// poll or push.
		return nil, nil
	}
	done := &applied{key: key, at: r.now()}
	for _, ref := range p.inventory {
		if isService(ref) && !p.failed[ref.Branch] { // a failed branch's would fail again
			done.services = append(done.services, ref.Name)
		}
	}
	return done, nil
}

// applyReason says why the repository must be applied, "" when an apply
// would change nothing.
func (r *Reconciler) applyReason(ctx context.Context, repo *knitv1alpha1.GitRepository, st *remembered, key string) (string, error) {
	switch {
	case st.applied == nil:
		return "first pass", nil
	case key != st.applied.key:
		return "heads, pull requests or spec changed", nil
	case r.now().Sub(st.applied.at) >= resync(repo):
		return "resync", nil
	}
	for _, name := range st.applied.services {
		if r.liveService(ctx, repo.Namespace, name) != nil {
			continue
		}
		// The cache may not have caught up with a Service just created:
		// ask the API server before applying again.
		err := r.reader.Get(ctx, client.ObjectKey{Namespace: repo.Namespace, Name: name}, &servingv1.Service{})
		if apierrors.IsNotFound(err) {
			return "Service " + name + " was deleted", nil
		}
		if err != nil {
			return "", fmt.Errorf("get Service %s: %w", name, err)
		}
	}
	return "", nil
}

// applyKey digests everything a render and apply reads besides the live
// cluster: the spec (generation), the fetched heads, and of each pull
// request into a tracked branch its number, branches, state and share of
// the traffic, and which of its head's preview Revisions are ready or
// failed (a preview joins the traffic once it is ready), each rollout's
// phase and percent, and the versions
// of the key Secrets decryption and verification read. Equal keys mean
// an apply would change nothing. A preview still deploying is left out,
// so creating one does not call for another apply; its readiness does.
func (r *Reconciler) applyKey(ctx context.Context, repo *knitv1alpha1.GitRepository, heads map[string]string, prs []knitv1alpha1.PullRequest, keys keySecrets) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "generation %d\n", repo.Generation)
	writeSorted(h, heads, "head")
	keys.write(h)
	for _, ro := range repo.Status.Rollouts {
		// A step taken moves the traffic the apply gives the Service.
		fmt.Fprintf(h, "rollout %s/%s %s %s %d\n", ro.Branch, ro.Service, ro.Revision, ro.Phase, ro.Percent)
	}
	prs = previewed(repo, prs)
	if len(prs) == 0 {
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	previews, err := r.previewStates(ctx, repo)
	if err != nil {
		return "", err
	}
	slices.SortFunc(prs, func(a, b knitv1alpha1.PullRequest) int { return cmp.Compare(a.Spec.Number, b.Spec.Number) })
	for i := range prs {
		pr := &prs[i]
		sha := heads[pr.Spec.HeadBranch]
		fmt.Fprintf(h, "pr %d %s@%s→%s %s canary %d share %d\n", pr.Spec.Number, pr.Spec.HeadBranch, sha, pr.Spec.BaseBranch,
			pr.Spec.State, pr.Spec.CanaryPercent, share(pr, sha))
		if isOpen(pr) {
			writeSorted(h, previews[previewOf{pr.Spec.Number, sha}], "preview")
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// previewOf names the previews of one pull request's head commit.
type previewOf struct {
	number int64
	commit string
}

// previewStates reads the repository's preview Revisions from the cache:
// per pull request and commit, the ready or failed ones' Ready status.
func (r *Reconciler) previewStates(ctx context.Context, repo *knitv1alpha1.GitRepository) (map[previewOf]map[string]string, error) {
	revs := &servingv1.RevisionList{}
	if err := r.client.List(ctx, revs, client.InNamespace(repo.Namespace),
		client.MatchingLabels{plan.RepositoryLabel: repo.Name}, client.HasLabels{plan.PullRequestLabel}); err != nil {
		return nil, fmt.Errorf("list preview Revisions: %w", err)
	}
	out := map[previewOf]map[string]string{}
	for _, rev := range revs.Items {
		ready := rev.Status.GetCondition(duckv1.ConditionReady)
		if !ready.IsTrue() && !ready.IsFalse() {
			continue
		}
		var number int64
		if _, err := fmt.Sscan(rev.Labels[plan.PullRequestLabel], &number); err != nil {
			continue
		}
		of := previewOf{number, rev.Annotations[plan.CommitAnnotation]}
		if out[of] == nil {
			out[of] = map[string]string{}
		}
		out[of][rev.Name] = string(ready.Status)
	}
	return out, nil
}

func writeSorted(w io.Writer, m map[string]string, what string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s %s %s\n", what, k, m[k])
	}
}

func isService(ref knitv1alpha1.ObjectReference) bool {
	return ref.Kind == "Service" && ref.APIVersion == servingv1.GroupVersion.String()
}
