package gc

import (
	"sort"
	"time"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	revresources "github.com/knitops/knit/controllers/revision/resources"
	"github.com/knitops/knit/controllers/route"
)

// Collect returns the Revisions of one Configuration to delete now and,
// when some are kept only because they are young, how long until the next
// one may become collectable (0: nothing pending).
func Collect(cfg *servingv1.Configuration, revs []servingv1.Revision, gc *config.GC, now time.Time) (deletions []string, recheck time.Duration) {
	nonActive := make([]servingv1.Revision, 0, len(revs))
	for _, rev := range revs {
		if rev.DeletionTimestamp != nil || isProtected(cfg, &rev) {
			continue
		}
		nonActive = append(nonActive, rev)
	}
	// Newest activity first, so the kept minimum is the most recently used.
	sort.SliceStable(nonActive, func(i, j int) bool { return lastActive(&nonActive[i]).After(lastActive(&nonActive[j])) })

	kept := 0
	for i := range nonActive {
		rev := &nonActive[i]
		if int64(i) < gc.MinNonActiveRevisions {
			kept++
			continue
		}
		if wait := staleIn(rev, gc, now); wait > 0 || wait == never {
			if gc.MaxNonActiveRevisions >= 0 && int64(kept) >= gc.MaxNonActiveRevisions {
				deletions = append(deletions, rev.Name)
				continue
			}
			kept++
			if wait != never && (recheck == 0 || wait < recheck) {
				recheck = wait
			}
			continue
		}
		deletions = append(deletions, rev.Name)
	}
	return deletions, recheck
}

// never marks a Revision that time alone will never make collectable.
const never time.Duration = -1

// staleIn is how long until the Revision is stale by both age rules; 0 if
// it already is, never if the age rules are disabled.
func staleIn(rev *servingv1.Revision, gc *config.GC, now time.Time) time.Duration {
	if gc.RetainSinceCreateTime == config.Disabled && gc.RetainSinceLastActiveTime == config.Disabled {
		return never
	}
	var wait time.Duration
	if gc.RetainSinceCreateTime != config.Disabled {
		wait = max(wait, rev.CreationTimestamp.Add(gc.RetainSinceCreateTime).Sub(now))
	}
	if gc.RetainSinceLastActiveTime != config.Disabled {
		wait = max(wait, lastActive(rev).Add(gc.RetainSinceLastActiveTime).Sub(now))
	}
	return max(wait, 0)
}

// isProtected: routed, latest created or latest ready Revisions stay.
func isProtected(cfg *servingv1.Configuration, rev *servingv1.Revision) bool {
	return rev.Labels[revresources.RoutingStateLabelKey] == "active" ||
		rev.Name == cfg.Status.LatestCreatedRevisionName ||
		rev.Name == cfg.Status.LatestReadyRevisionName
}

// lastActive is when the Revision last stopped (or started) receiving
// traffic, else when it was created.
func lastActive(rev *servingv1.Revision) time.Time {
	if v := rev.Annotations[route.RoutingStateModifiedAnnotation]; v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
	}
	return rev.CreationTimestamp.Time
}
