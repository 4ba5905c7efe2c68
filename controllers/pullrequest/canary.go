package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/canary"
	prmodel "github.com/knitops/knit/gitsync/pullrequest"
	"github.com/knitops/knit/gitsync/stepper"
)

// errNoBase refuses a stepped canary of a head that only adds Services.
var errNoBase = errors.New("a canary shares a base Service's traffic, and this pull request's head only adds Services " +
	"(each previewed as a Service of its own): there is no traffic to step")

// reconcileCanary moves pr's stepped canary on and returns when to look
// again. It sets status.canary and the Canary condition. noBase: the
// head's preview is Services of their own, with no base traffic to share.
func (r *Reconciler) reconcileCanary(ctx context.Context, pr *knitv1alpha1.PullRequest, commit string, noBase bool) (time.Duration, error) {
	if !prmodel.Approved(pr, commit) {
		// A fork's head no maintainer approved gets no traffic.
		pr.Status.Canary = nil
		return 0, nil
	}
	p, src, err := planFor(pr)
	if err == nil && src != canary.SourceNone && noBase {
		err = errNoBase
	}
	switch {
	case err != nil:
		pr.Status.Canary = &knitv1alpha1.CanaryStatus{Phase: knitv1alpha1.CanaryInvalid, Message: err.Error()}
		pr.Status.MarkCanaryInvalid(err.Error())
		return 0, nil
	case src == canary.SourceNone:
		pr.Status.Canary = nil
		return 0, nil
	}
	key := types.NamespacedName{Namespace: pr.Namespace, Name: pr.Name}
	now := r.now()
	c := start(pr.Status.Canary, canaryPlan{source: string(src), Plan: p}, commit, previewReady(pr, commit), now)
	defer func() { pr.Status.Canary = c; markCanary(&pr.Status, c) }()
	next, v, after, err := stepper.Step(ctx, r.windows, key, c, now, func(ctx context.Context) (stepper.Window, error) { return r.snapshot(ctx, pr, c) },
		func() canary.Thresholds { return p.Thresholds })
	if err != nil {
		return 0, err
	}
	if v != nil {
		log.FromContext(ctx).Info("Canary step analysed", "pullRequest", key, "step", c.Step, "percent", c.Percent, "verdict", v.Result.String(), "reason", v.Reason)
		if v.Result == canary.Fail && r.announcer != nil {
			r.announcer.CanaryFailed(ctx, pr, next.Commit, pr.Status.RevisionName, next.Message)
		}
	}
	c = next
	if after == 0 {
		return 0, nil
	}
	return requeueFor(after), nil
}

// snapshot reads both revisions' counters now.
func (r *Reconciler) snapshot(ctx context.Context, pr *knitv1alpha1.PullRequest, c *knitv1alpha1.CanaryStatus) (stepper.Window, error) {
	stable, err := r.stableRevision(ctx, pr)
	if err != nil {
		return stepper.Window{}, err
	}
	return stepper.Snapshot(ctx, r.metrics, pr.Namespace, stable, pr.Status.RevisionName, c)
}

// markCanary mirrors the canary's phase on the Canary condition.
func markCanary(s *knitv1alpha1.PullRequestStatus, c *knitv1alpha1.CanaryStatus) {
	switch c.Phase {
	case knitv1alpha1.CanaryPromoted:
		s.MarkCanaryPromoted(c.Message)
	case knitv1alpha1.CanaryRolledBack:
		s.MarkCanaryRolledBack(c.Message)
	default:
		msg := c.Message
		if msg == "" {
			msg = fmt.Sprintf("step %d of %d: %d%% of traffic", c.Step, len(c.Steps), c.Percent)
		}
		s.MarkCanaryProgressing(msg)
	}
}
