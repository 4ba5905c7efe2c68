package rollout

import (
	"cmp"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/canary"
)

// AnnotationKey on a Service in Git asks for a stepped rollout of each new
// Revision a push brings; its value is a plan ("10,50 every 1m") or Off.
const AnnotationKey = "knit.dev/rollout"

// Off, as the annotation's value, deploys the Service's pushes at once
// even when its GitRepository's spec.rollout asks for steps.
const Off = "off"

// Where a plan came from, as RolloutStatus.Source says.
const (
	SourceAnnotation = "annotation"
	SourceRepository = "repository"
)

// PlanFor is the plan in force for a Service: its annotation's, else the
// repository's default; ok is false when neither asks for one. A plan
// that cannot be read is an error naming where it was written.
func PlanFor(annotation, repoDefault string) (p canary.Plan, source string, ok bool, err error) {
	switch {
	case annotation == Off:
		return canary.Plan{}, "", false, nil
	case annotation != "":
		p, err = canary.ParseRollout("annotation "+AnnotationKey, annotation)
		return p, SourceAnnotation, err == nil, err
	case repoDefault != "":
		p, err = canary.ParseRollout("spec.rollout", repoDefault)
		return p, SourceRepository, err == nil, err
	}
	return canary.Plan{}, "", false, nil
}

// Push is what a push asks of one Service with a plan.
type Push struct {
	Branch, Commit string
	// Service is the Service's name as applied; Candidate the Revision its
	// template names for this push.
	Service, Candidate string
	Source             string
	Plan               canary.Plan
	// Live is the Service as it runs now, nil before its first deploy.
	Live *servingv1.Service
}

// Begin is the rollout a push leaves: prev (the Service's last one) when
// it already rolls out this candidate; nil when nothing rolls out (the
// Service's first deploy, a template the live Service already runs, no
// ready Revision to fall back to); else a new rollout waiting for the
// candidate to be ready. A new rollout keeps prev's stable Revision
// while prev had not promoted its own: what served all along stays the
// fallback, not a candidate nobody judged to the end.
func Begin(prev *knitv1alpha1.RolloutStatus, push Push) *knitv1alpha1.RolloutStatus {
	if prev != nil && prev.Revision == push.Candidate && prev.Branch == push.Branch {
		return prev
	}
	if push.Live == nil {
		return nil
	}
	stable := push.Live.Status.LatestReadyRevisionName
	if prev != nil {
		stable = prev.Stable
		if prev.Phase == knitv1alpha1.CanaryPromoted {
			stable = prev.Revision
		}
	} else if push.Live.Spec.Template.Name == push.Candidate {
		return nil // the live Service runs it already
	}
	if stable == "" || stable == push.Candidate {
		return nil
	}
	return &knitv1alpha1.RolloutStatus{
		Branch: push.Branch, Service: push.Service, Revision: push.Candidate, Stable: stable,
		CanaryStatus: knitv1alpha1.CanaryStatus{
			Source: push.Source, Steps: push.Plan.Steps, Interval: metav1.Duration{Duration: push.Plan.Interval},
			Commit: push.Commit, Phase: knitv1alpha1.CanaryProgressing, Message: waiting(push.Candidate),
		},
	}
}

func waiting(candidate string) string {
	return fmt.Sprintf("waiting for Revision %s to be ready", candidate)
}

// Waiting says whether r waits for its candidate before its first step.
func Waiting(r *knitv1alpha1.RolloutStatus) bool {
	return r.Phase == knitv1alpha1.CanaryProgressing && r.StepStarted == nil && r.Step == 0
}

// Proceed starts a waiting rollout's first step once its candidate is
// ready, and rolls it back when the candidate failed (its Ready
// condition): the stable Revision never lost its traffic. Any other
// rollout is returned as it is.
func Proceed(r *knitv1alpha1.RolloutStatus, candidate *duckv1.Condition, now time.Time) *knitv1alpha1.RolloutStatus {
	if !Waiting(r) {
		return r
	}
	next := r.DeepCopy()
	switch {
	case candidate.IsTrue():
		next.Step, next.Percent, next.Message = 1, r.Steps[0], ""
		next.StepStarted = &metav1.Time{Time: now}
	case candidate.IsFalse():
		next.Phase, next.Verdict = knitv1alpha1.CanaryRolledBack, canary.Fail.String()
		next.Message = fmt.Sprintf("Revision %s failed: %s", r.Revision, cmp.Or(candidate.Message, candidate.Reason))
		next.LastAnalysis = &metav1.Time{Time: now}
	}
	return next
}
