package pullrequest

import (
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
