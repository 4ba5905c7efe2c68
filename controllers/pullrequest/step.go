package pullrequest

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/canary"
)

// canaryPlan is the stepped canary a user asked for and where they wrote it.
type canaryPlan struct {
	source string
	canary.Plan
}

// start returns the canary's state for commit under p: kept when it already
// runs p on commit, else (a new push, a changed plan) restarted. Until the
// preview is ready the head gets nothing and no step runs.
func start(cur *knitv1alpha1.CanaryStatus, p canaryPlan, commit string, previewReady bool, now time.Time) *knitv1alpha1.CanaryStatus {
	if cur != nil && cur.Commit == commit && slices.Equal(cur.Steps, p.Steps) && cur.Interval.Duration == p.Interval &&
		(cur.StepStarted != nil || cur.Phase != knitv1alpha1.CanaryProgressing) {
		return cur
	}
	next := &knitv1alpha1.CanaryStatus{
		Source: p.source, Steps: p.Steps, Interval: metav1.Duration{Duration: p.Interval},
		Commit: commit, Phase: knitv1alpha1.CanaryProgressing,
	}
	if !previewReady {
		next.Message = "waiting for the preview to be ready"
		return next
	}
	next.Step, next.Percent = 1, p.Steps[0]
	next.StepStarted = &metav1.Time{Time: now}
	return next
}

// due reports whether the running step's window is over, or how long is
// left of it.
func due(c *knitv1alpha1.CanaryStatus, now time.Time) (bool, time.Duration) {
	if c == nil || c.Phase != knitv1alpha1.CanaryProgressing || c.StepStarted == nil {
		return false, 0
	}
	from := c.StepStarted.Time
	if c.LastAnalysis != nil && c.LastAnalysis.After(from) {
		from = c.LastAnalysis.Time
	}
	left := from.Add(c.Interval.Duration).Sub(now)
	return left <= 0, left
}

// advance applies a step's verdict: a pass moves to the next step (or
// promotes after the last), a failure rolls back to 0 %, an inconclusive
// analysis (too few requests) keeps the step running for another window.
func advance(c *knitv1alpha1.CanaryStatus, v canary.Verdict, now time.Time) *knitv1alpha1.CanaryStatus {
	next := c.DeepCopy()
	next.Verdict, next.Message = v.Result.String(), fmt.Sprintf("step %d (%d%%): %s", c.Step, c.Percent, v.Reason)
	next.LastAnalysis = &metav1.Time{Time: now}
	switch v.Result {
	case canary.Fail:
		next.Phase, next.Percent, next.StepStarted = knitv1alpha1.CanaryRolledBack, 0, nil
	case canary.Inconclusive:
		// The window grows from the same start: its numbers accumulate.
	case canary.Pass:
		if int(c.Step) >= len(c.Steps) {
			next.Phase, next.StepStarted = knitv1alpha1.CanaryPromoted, nil
			return next
		}
		next.Step++
		next.Percent = c.Steps[next.Step-1]
		next.StepStarted = &metav1.Time{Time: now}
	}
	return next
}
