package gitrepository

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/canary"
	"github.com/knitops/knit/gitsync/plan"
	"github.com/knitops/knit/gitsync/rollout"
	"github.com/knitops/knit/gitsync/stepper"
)

// rolloutKey names one Service's rollout among every repository's, for
// its step windows.
type rolloutKey struct {
	namespace, repo, branch, service string
}

func keyOf(repo *knitv1alpha1.GitRepository, ro *knitv1alpha1.RolloutStatus) rolloutKey {
	return rolloutKey{repo.Namespace, repo.Name, ro.Branch, ro.Service}
}

// rolloutTraffic is plan.Input.Rollout for commit c: it begins, or keeps,
// the rollout of each Service with a plan, records it for the branch's
// status (written once the branch applies: a commit refused or still
// building leaves the rollouts as they were) and returns its traffic.
func (p *pass) rolloutTraffic(ctx context.Context, c plan.Commit) func(*servingv1.Service) ([]servingv1.TrafficTarget, error) {
	return func(svc *servingv1.Service) ([]servingv1.TrafficTarget, error) {
		pl, source, ok, err := rollout.PlanFor(svc.Annotations[rollout.AnnotationKey], p.repo.Spec.Rollout)
		if err != nil || !ok {
			return svc.Spec.Traffic, err
		}
		ro := rollout.Begin(p.repo.Status.Rollout(c.Branch, svc.Name), rollout.Push{
			Branch: c.Branch, Commit: c.SHA, Service: svc.Name, Candidate: svc.Spec.Template.Name, Source: source, Plan: pl,
			Live: p.r.liveService(ctx, p.repo.Namespace, svc.Name),
		})
		if ro == nil {
			return rollout.Traffic(svc.Spec.Traffic, nil)
		}
		if p.rollouts == nil {
			p.rollouts = map[string][]knitv1alpha1.RolloutStatus{}
		}
		p.rollouts[c.Branch] = append(p.rollouts[c.Branch], *ro)
		return rollout.Traffic(svc.Spec.Traffic, ro)
	}
}

// keepRollouts writes the rollouts of the pass's applied branches into
// the status, and keeps those of branches that did not apply; rollouts
// of branches no longer tracked go.
func (p *pass) keepRollouts() {
	var out []knitv1alpha1.RolloutStatus
	for _, branch := range trackedBranches(p.repo) {
		if p.failed[branch] {
			for _, ro := range p.repo.Status.Rollouts {
				if ro.Branch == branch {
					out = append(out, ro)
				}
			}
			continue
		}
		for _, ro := range p.rollouts[branch] {
			if prev := p.repo.Status.Rollout(branch, ro.Service); prev == nil || prev.Revision != ro.Revision {
				p.r.events.Eventf(p.repo, nil, corev1.EventTypeNormal, "RolloutStarted", "Rollout",
					"Service %s: rolling out %s of %.7s in steps of %v percent; %s keeps the rest", ro.Service, ro.Revision, ro.Commit, ro.Steps, ro.Stable)
			}
			out = append(out, ro)
		}
	}
	p.repo.Status.Rollouts = out
}

// stepRollouts moves each running rollout on: the first step once its
// Revision is ready, the next one once a step's window passed its
// analysis, back to the stable Revision when one failed. It returns how
// long until a rollout needs another look (0 for none). It runs before
// the apply phase, whose key holds every rollout's percent, so a step
// taken here is applied in the same pass. Metrics that cannot be read
// are logged and looked at again shortly: the sync goes on regardless.
func (r *Reconciler) stepRollouts(ctx context.Context, repo *knitv1alpha1.GitRepository) time.Duration {
	var next time.Duration
	live := map[rolloutKey]bool{}
	for i := range repo.Status.Rollouts {
		ro := &repo.Status.Rollouts[i]
		if ro.Phase != knitv1alpha1.CanaryProgressing {
			continue
		}
		live[keyOf(repo, ro)] = true
		after, err := r.stepRollout(ctx, repo, ro)
		if err != nil {
			log.FromContext(ctx).Info("Rollout step not judged; looking again", "service", ro.Service, "revision", ro.Revision, "err", err.Error())
			after = 5 * time.Second
		}
		if after > 0 && (next == 0 || after < next) {
			next = after
		}
	}
	r.windows.Keep(func(k rolloutKey) bool { return k.namespace != repo.Namespace || k.repo != repo.Name || live[k] })
	return next
}

// stepRollout moves one running rollout on, as the pull request's canary
// moves (stepper), and says when to look again.
func (r *Reconciler) stepRollout(ctx context.Context, repo *knitv1alpha1.GitRepository, ro *knitv1alpha1.RolloutStatus) (time.Duration, error) {
	now := r.now()
	if rollout.Waiting(ro) {
		rev := &servingv1.Revision{}
		var ready *duckv1.Condition
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: repo.Namespace, Name: ro.Revision}, rev); err == nil {
			ready = rev.Status.GetCondition(duckv1.ConditionReady)
		}
		r.moved(ctx, repo, ro, rollout.Proceed(ro, ready, now))
		if ro.Phase != knitv1alpha1.CanaryProgressing || ro.StepStarted == nil {
			return 0, nil // waits for the Revision, whose readiness wakes the repository
		}
	}
	next, v, after, err := stepper.Step(ctx, r.windows, keyOf(repo, ro), &ro.CanaryStatus, now,
		func(ctx context.Context) (stepper.Window, error) {
			return stepper.Snapshot(ctx, r.metrics, repo.Namespace, ro.Stable, ro.Revision, &ro.CanaryStatus)
		},
		func() canary.Thresholds { return r.thresholds(ctx, repo, ro) })
	if err != nil {
		return 0, err
	}
	if v != nil {
		log.FromContext(ctx).Info("Rollout step analysed", "service", ro.Service, "revision", ro.Revision, "step", ro.Step,
			"percent", ro.Percent, "verdict", v.Result.String(), "reason", v.Reason)
	}
	stepped := ro.DeepCopy()
	stepped.CanaryStatus = *next
	r.moved(ctx, repo, ro, stepped)
	return after, nil
}

// thresholds are the plan's in force for ro: the live Service's
// annotation, else the repository's spec.rollout, else the defaults
// (the plan was dropped in the middle of the rollout).
func (r *Reconciler) thresholds(ctx context.Context, repo *knitv1alpha1.GitRepository, ro *knitv1alpha1.RolloutStatus) canary.Thresholds {
	var annotation string
	if svc := r.liveService(ctx, repo.Namespace, ro.Service); svc != nil {
		annotation = svc.Annotations[rollout.AnnotationKey]
	}
	if p, _, ok, err := rollout.PlanFor(annotation, repo.Spec.Rollout); ok && err == nil {
		return p.Thresholds
	}
	return canary.DefaultThresholds()
}

// moved records ro becoming next: an Event per step, promotion and
// rollback, and a rollback is announced to the user's event sinks.
func (r *Reconciler) moved(ctx context.Context, repo *knitv1alpha1.GitRepository, ro, next *knitv1alpha1.RolloutStatus) {
	was := *ro
	*ro = *next
	switch {
	case ro.Phase == knitv1alpha1.CanaryRolledBack && was.Phase != knitv1alpha1.CanaryRolledBack:
		r.events.Eventf(repo, nil, corev1.EventTypeWarning, "RolloutRolledBack", "Rollout",
			"Service %s: %s rolled back to %s: %s", ro.Service, ro.Revision, ro.Stable, ro.Message)
		if r.announcer != nil {
			r.announcer.RolloutFailed(ctx, repo, *ro)
		}
	case ro.Phase == knitv1alpha1.CanaryPromoted && was.Phase != knitv1alpha1.CanaryPromoted:
		r.events.Eventf(repo, nil, corev1.EventTypeNormal, "RolloutPromoted", "Rollout",
			"Service %s: %s serves all traffic: %s", ro.Service, ro.Revision, ro.Message)
	case ro.Step != was.Step:
		r.events.Eventf(repo, nil, corev1.EventTypeNormal, "RolloutStep", "Rollout",
			"Service %s: step %d of %d, %d%% to %s", ro.Service, ro.Step, len(ro.Steps), ro.Percent, ro.Revision)
	}
}

// markRollouts is the Rollouts condition: False naming every rollout
// rolled back (until a push replaces it), Unknown while one runs, else
// True.
func markRollouts(repo *knitv1alpha1.GitRepository) {
	var failed, running []string
	for _, ro := range repo.Status.Rollouts {
		switch ro.Phase {
		case knitv1alpha1.CanaryRolledBack:
			failed = append(failed, fmt.Sprintf("Service %s: %s of %.7s rolled back, %s serves: %s", ro.Service, ro.Revision, ro.Commit, ro.Stable, ro.Message))
		case knitv1alpha1.CanaryProgressing:
			running = append(running, fmt.Sprintf("Service %s: %s, %s", ro.Service, ro.Revision, stepper.Progress(&ro.CanaryStatus)))
		}
	}
	switch {
	case len(failed) > 0:
		repo.Status.MarkRolloutsFailed(strings.Join(failed, "; "))
	case len(running) > 0:
		repo.Status.MarkRolloutsProgressing(strings.Join(running, "; "))
	default:
		repo.Status.MarkRolloutsSettled()
	}
}
