package gitrepository

import (
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/gitsync/hub"
	"github.com/knitops/knit/gitsync/plan"
)

// The predicates drop the events a pass has nothing to do for, so that a
// busy Revision or a canary's verdicts cost no pass at all. Creations and
// deletions always pass.

// repositoryChanged passes a GitRepository's spec changes and a sync
// requested through knit.dev/requested-at, not its own status writes.
var repositoryChanged = predicate.Or[client.Object](predicate.GenerationChangedPredicate{},
	predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetAnnotations()[hub.RequestedAtAnnotation] != e.ObjectNew.GetAnnotations()[hub.RequestedAtAnnotation]
	}})

// pullRequestChanged passes a PullRequest's spec changes and its share
// of traffic moving (a canary step, a rollback). The rest of its status
// (what the forge was told, verdicts, its preview's URL and readiness,
// all the PullRequest reconciler's) changes nothing a pass reads.
var pullRequestChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, ok1 := e.ObjectOld.(*knitv1alpha1.PullRequest)
	now, ok2 := e.ObjectNew.(*knitv1alpha1.PullRequest)
	if !ok1 || !ok2 {
		return true
	}
	return old.Generation != now.Generation || old.EffectiveShare() != now.EffectiveShare() || canaryCommit(old) != canaryCommit(now)
}}

// labelled passes objects deployed from a repository.
var labelled = predicate.NewPredicateFuncs(func(obj client.Object) bool {
	return obj.GetLabels()[plan.RepositoryLabel] != ""
})

// serviceChanged passes the Service status the roll-up reports: its
// latest Revisions (RevisionsReady), its Ready condition, URL and
// observed generation (the knit/deploy status: a Service serves a commit
// once its status is of the spec that commit applied). Its spec is what
// the last apply wrote; its traffic's URLs are the PullRequest
// reconciler's to read.
var serviceChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, ok1 := e.ObjectOld.(*servingv1.Service)
	now, ok2 := e.ObjectNew.(*servingv1.Service)
	if !ok1 || !ok2 {
		return true
	}
	return old.Status.ConfigurationStatusFields != now.Status.ConfigurationStatusFields || old.Status.ObservedGeneration != now.Status.ObservedGeneration ||
		old.Status.URL != now.Status.URL ||
		!sameCondition(old.Status.GetCondition(duckv1.ConditionReady), now.Status.GetCondition(duckv1.ConditionReady))
}}

// readinessChanged passes a Revision's Ready condition moving: the roll-up
// reports it, and a preview joins its base's traffic once ready.
var readinessChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, ok1 := e.ObjectOld.(*servingv1.Revision)
	now, ok2 := e.ObjectNew.(*servingv1.Revision)
	if !ok1 || !ok2 {
		return true
	}
	return !sameCondition(old.Status.GetCondition(duckv1.ConditionReady), now.Status.GetCondition(duckv1.ConditionReady))
}}

func sameCondition(a, b *duckv1.Condition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

func canaryCommit(pr *knitv1alpha1.PullRequest) string {
	if pr.Status.Canary == nil {
		return ""
	}
	return pr.Status.Canary.Commit
}

// buildFinished passes a build Job's creation (a restarted controller
// picks up what finished while it was away) and the update that finishes
// it.
var buildFinished = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return true },
	UpdateFunc:  func(e event.UpdateEvent) bool { return jobDone(e.ObjectOld) != jobDone(e.ObjectNew) },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func jobDone(obj client.Object) bool {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return false
	}
	done, _ := build.Finished(job)
	return done
}
