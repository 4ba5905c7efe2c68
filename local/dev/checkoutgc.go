package dev

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// Checkout garbage collection: every commit a Revision was deployed from
// is checked out under <state>/src/<namespace>/<repository>/<sha> for its
// ko:// builds, and nothing removed them, so a repository pushed 25 times
// kept 25 trees (622 MB in the finding that asked for this). A checkout is
// needed while a Revision of its commit exists (its replicas build and run
// in it); the rest go.
const (
	checkoutGCEvery = 10 * time.Minute
	// checkoutGrace keeps a checkout a sync just made for a Revision it
	// has not created yet.
	checkoutGrace = 10 * time.Minute
)

// checkoutGC prunes the checkouts no Revision needs, at start and every
// checkoutGCEvery.
type checkoutGC struct {
	reader  client.Reader
	srcRoot string
	log     logr.Logger
}

// Start runs until ctx ends (a manager Runnable).
func (gc *checkoutGC) Start(ctx context.Context) error {
	t := time.NewTicker(checkoutGCEvery)
	defer t.Stop()
	for {
		if err := gc.prune(ctx, time.Now()); err != nil {
			gc.log.Error(err, "Could not prune checkouts; retrying at the next round")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (gc *checkoutGC) prune(ctx context.Context, now time.Time) error {
	revs := &servingv1.RevisionList{}
	if err := gc.reader.List(ctx, revs); err != nil {
		return err
	}
	live := liveCheckouts(revs.Items)
	repos, err := filepath.Glob(filepath.Join(gc.srcRoot, "*", "*"))
	if err != nil {
		return err
	}
	for _, dir := range repos {
		key := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
		removed, err := gitsource.PruneCheckouts(dir, func(sha string) bool { return live[key][sha] }, checkoutGrace, now)
		for _, r := range removed {
			gc.log.V(1).Info("Removed a checkout no Revision needs", "dir", r)
		}
		if err != nil {
			return err
		}
		_ = os.Remove(dir) // only when empty: a repository nothing is deployed from any more
	}
	return nil
}

// liveCheckouts are the commits the Revisions were deployed from, by
// <namespace>/<repository>.
func liveCheckouts(revs []servingv1.Revision) map[string]map[string]bool {
	live := map[string]map[string]bool{}
	for _, r := range revs {
		repo, sha := r.Labels[plan.RepositoryLabel], r.Annotations[plan.CommitAnnotation]
		if repo == "" || sha == "" {
			continue
		}
		key := r.Namespace + "/" + repo
		if live[key] == nil {
			live[key] = map[string]bool{}
		}
		live[key][sha] = true
	}
	return live
}
