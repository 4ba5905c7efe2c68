package stepper

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/canary"
)

// Step is one look at a running step of c, whose windows are kept in w
// under key: it opens the step's window when none is open (the step just
// started, or knit restarted in the middle of one: the window starts
// now), and once the window is over judges it with snapshot's counters
// and thresholds' limits (asked only then) and applies the verdict. It
// returns c as it now stands (c itself when nothing moved), the verdict
// when one was reached, and how long until the next look (0 when no step
// runs; not above 0 when the window is already over).
func Step[K comparable](ctx context.Context, w *Windows[K], key K, c *knitv1alpha1.CanaryStatus, now time.Time,
	snapshot func(context.Context) (Window, error), thresholds func() canary.Thresholds) (*knitv1alpha1.CanaryStatus, *canary.Verdict, time.Duration, error) {
	if c.Phase != knitv1alpha1.CanaryProgressing || c.StepStarted == nil {
		return c, nil, 0, nil
	}
	isDue, left := Due(c, now)
	start, ok := w.Get(key, c.Commit, c.Step)
	if !ok {
		win, err := snapshot(ctx)
		if err != nil {
			return c, nil, 0, err
		}
		w.Set(key, win)
		if isDue || c.StepStarted.Time.Before(now) {
			c = c.DeepCopy()
			c.StepStarted, c.LastAnalysis = &metav1.Time{Time: now}, nil
		}
		return c, nil, c.Interval.Duration, nil
	}
	if !isDue {
		return c, nil, left, nil
	}
	end, err := snapshot(ctx)
	if err != nil {
		return c, nil, 0, err
	}
	v := canary.Analyze(canary.DeltaReplicas(start.Stable, end.Stable), canary.DeltaReplicas(start.Canary, end.Canary), thresholds())
	c = Advance(c, v, now)
	if c.Phase != knitv1alpha1.CanaryProgressing {
		return c, &v, 0, nil
	}
	if v.Result == canary.Pass {
		end.Step = c.Step // the next step's window starts where this one ended
		w.Set(key, end)
	}
	return c, &v, c.Interval.Duration, nil
}
