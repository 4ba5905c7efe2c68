package gitrepository

import (
	"context"
	"errors"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/hub"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// fetchIfDue is the fetch phase: it asks the remote for the heads only
// when the last fetch may be out of date (fetchReason), and otherwise
// passes the last fetch on. It sets Fetched.
func (r *Reconciler) fetchIfDue(ctx context.Context, repo *knitv1alpha1.GitRepository, prs []knitv1alpha1.PullRequest, st *remembered) error {
	branches, asked := fetchList(repo, prs)
	reason := st.fetchReason(repo, asked, r.now())
	if reason == "" {
		// The last fetch stands, whether or not its pass wrote so.
		st.markFetch(repo)
		return nil
	}
	st.refetch = true // until it succeeds
	auth, err := r.auth(ctx, repo)
	if err != nil {
		repo.Status.MarkFetchFailed(authFailedReason(err), err.Error())
		return err
	}
	log.FromContext(ctx).V(1).Info("Fetching", "reason", reason, "branches", branches)
	fetchesTotal.WithLabelValues(repo.Namespace, repo.Name).Inc()
	fetched, err := r.cache.Fetch(ctx, cacheKey(client.ObjectKeyFromObject(repo)), repo.Spec.URL, branches, auth)
	if tooLarge := (*gitsource.TooLargeError)(nil); errors.As(err, &tooLarge) {
		// Not an error to retry: the same commits would be refused again.
		// The next push, spec change or interval asks again.
		log.FromContext(ctx).Info("New commits too large to fetch", "limit", tooLarge.Limit)
		st.refuse(repo, asked, r.now(), err.Error())
		st.markFetch(repo)
		return nil
	}
	if err != nil {
		repo.Status.MarkFetchFailed(fetchFailedReason(err), err.Error())
		return err
	}
	st.remember(repo, fetched, asked, r.now())
	st.markFetch(repo)
	return nil
}

// markFetch sets Fetched from the last fetch: True, or False with
// TooLarge while the new commits are too large to fetch. Synced says so
// too (markTooLarge), after the apply phase.
func (st *remembered) markFetch(repo *knitv1alpha1.GitRepository) {
	if st.tooLarge != "" {
		repo.Status.MarkFetchFailed(knitv1alpha1.ReasonTooLarge, st.tooLarge)
		return
	}
	repo.Status.MarkFetched()
}

// markTooLarge sets Synced to False with TooLarge while the new commits
// are too large to fetch: what the apply phase synced, if it ran, is the
// last commits fetched, not the branches' heads.
func (st *remembered) markTooLarge(repo *knitv1alpha1.GitRepository) {
	if st.tooLarge != "" {
		repo.Status.MarkSyncFailed(knitv1alpha1.ReasonTooLarge, st.tooLarge+"; what was deployed before keeps serving")
	}
}

// fetchReason says why the last fetch may be out of date, "" when it is
// not: none yet, a failed or triggered one pending, a new spec, a sync
// requested through the annotation, the interval elapsed, or a pull
// request on a branch, or naming a head commit, the last fetch did not
// bring. A status change of anything never is one.
func (st *remembered) fetchReason(repo *knitv1alpha1.GitRepository, asked map[string]string, now time.Time) string {
	switch {
	case st.fetchedAt.IsZero():
		return "first pass"
	case st.refetch:
		return "triggered, or the last fetch failed"
	case repo.Generation != st.generation:
		return "spec changed"
	case requestedAt(repo) != st.requestedAt:
		return "sync requested"
	case now.Sub(st.fetchedAt) >= interval(repo):
		return "interval"
	}
	for branch, commit := range asked {
		had, ok := st.asked[branch]
		switch {
		case !ok:
			return "pull request on branch " + branch
		case commit != "" && commit != had && commit != st.fetched.Heads[branch]:
			return "pull request names a new head of " + branch
		}
	}
	return ""
}

// nextPoll is how long until the interval calls for a fetch, or the
// resync for an apply, whichever comes first.
func (st *remembered) nextPoll(repo *knitv1alpha1.GitRepository, now time.Time) time.Duration {
	next := st.fetchedAt.Add(interval(repo))
	if st.applied != nil {
		next = minTime(next, st.applied.at.Add(resync(repo)))
	}
	return max(time.Second, next.Sub(now))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// fetchList is every branch a pass reads, in order: the tracked ones and
// the heads of open pull requests into them. asked maps each to the head
// commit a pull request names for it ("" for none).
func fetchList(repo *knitv1alpha1.GitRepository, prs []knitv1alpha1.PullRequest) ([]string, map[string]string) {
	var out []string
	asked := map[string]string{}
	add := func(b, commit string) {
		if had, ok := asked[b]; !ok {
			out = append(out, b)
		} else if had != "" {
			return
		}
		asked[b] = commit
	}
	for _, b := range trackedBranches(repo) {
		add(b, "")
	}
	for _, pr := range previewed(repo, prs) {
		if isOpen(&pr) {
			add(pr.Spec.HeadBranch, pr.Spec.HeadCommit)
		}
	}
	return out, asked
}

// requestedAt is the repository's knit.dev/requested-at: a new value is a
// sync asked for (by a push to knit's Git server, a forge webhook, or
// kubectl annotate).
func requestedAt(repo *knitv1alpha1.GitRepository) string {
	return repo.Annotations[hub.RequestedAtAnnotation]
}

func interval(repo *knitv1alpha1.GitRepository) time.Duration {
	if d := repo.Spec.Interval.Duration; d > 0 {
		return d
	}
	return defaultInterval
}
