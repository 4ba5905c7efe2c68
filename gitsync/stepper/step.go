package stepper

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/canary"
)

// Due reports whether the running step's window is over, or how long is
// left of it.
func Due(c *knitv1alpha1.CanaryStatus, now time.Time) (bool, time.Duration) {
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

// Advance applies a step's verdict: a pass moves to the next step (or
// promotes after the last), a failure rolls back to 0 %, an inconclusive
// analysis (too few requests) keeps the step running for another window.
func Advance(c *knitv1alpha1.CanaryStatus, v canary.Verdict, now time.Time) *knitv1alpha1.CanaryStatus {
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

// Progress is the running step in words, for a condition or a forge.
func Progress(c *knitv1alpha1.CanaryStatus) string {
	if c.Message != "" && c.StepStarted == nil {
		return c.Message
	}
	return fmt.Sprintf("step %d of %d: %d%% of traffic", c.Step, len(c.Steps), c.Percent)
}
