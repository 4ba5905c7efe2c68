package announce

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/events"
	"github.com/knitops/knit/gitsync/plan"
)

// How long revision.ready waits for the Service to publish a URL, and
// how often it looks: after that the event goes out without one.
const (
	urlWait = 30 * time.Second
	urlPoll = 250 * time.Millisecond
)

// revisionReconciler announces Git-deployed Revisions becoming ready or
// failing.
type revisionReconciler struct{ a *Announcer }

func (r *revisionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rev := &servingv1.Revision{}
	if err := r.a.client.Get(ctx, req.NamespacedName, rev); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ready := rev.Status.GetCondition(duckv1.ConditionReady)
	if ready == nil || rev.Labels[plan.RepositoryLabel] == "" {
		return ctrl.Result{}, nil
	}
	var typ string
	switch {
	case ready.IsTrue():
		typ = events.TypeRevisionReady
	case ready.IsFalse():
		typ = events.TypeRevisionFailed
	default:
		return ctrl.Result{}, nil
	}
	data := revisionData(rev)
	data.URL = r.a.revisionURL(ctx, rev)
	if typ == events.TypeRevisionReady && data.URL == "" && time.Since(ready.LastTransitionTime.Time) < urlWait {
		// A first deploy's Revision is ready before its Service has a
		// URL; the event is worth more with the URL in it.
		return ctrl.Result{RequeueAfter: urlPoll}, nil
	}
	key := fmt.Sprintf("%s %s", typ, ready.LastTransitionTime.UTC().Format("2006-01-02T15:04:05Z"))
	if !r.a.once(string(rev.UID), key) {
		return ctrl.Result{}, nil
	}
	if typ == events.TypeRevisionFailed {
		data.Failure = &events.Failure{Reason: ready.Reason, Message: ready.Message}
	}
	r.a.send(ctx, rev.Namespace, rev.Labels[plan.PullRequestLabel], events.Occurrence{
		Type: typ, Resource: events.Resource{Kind: "Revision", Namespace: rev.Namespace, Name: rev.Name},
		Key: string(rev.UID) + " " + key, Data: data,
	})
	return ctrl.Result{}, nil
}

func revisionData(rev *servingv1.Revision) events.Data {
	return events.Data{
		Repo: rev.Labels[plan.RepositoryLabel], Branch: rev.Labels[plan.BranchLabel],
		Commit: rev.Annotations[plan.CommitAnnotation], Author: rev.Annotations[plan.AuthorAnnotation],
		Message: rev.Annotations[plan.MessageAnnotation], Revision: rev.Name,
	}
}

// revisionURL is where the Revision answers: its tag's URL when it has
// one (a pull request's preview), else its Service's.
func (a *Announcer) revisionURL(ctx context.Context, rev *servingv1.Revision) string {
	svc := &servingv1.Service{}
	if err := a.client.Get(ctx, client.ObjectKey{Namespace: rev.Namespace, Name: rev.Labels[servingv1.ServiceLabelKey]}, svc); err != nil {
		return ""
	}
	for _, t := range svc.Status.Traffic {
		if t.RevisionName == rev.Name && t.URL != "" {
			return t.URL
		}
	}
	return svc.Status.URL
}

// SyncFailed implements gitrepository.Announcer. The reconciler calls it
// at every pass that finds the branch head still failing; the event's id
// is the fact — repository, branch, commit and error — so every pass after
// the first announces a repeat, which the dispatcher sends once (and
// remembers across restarts), while a new error on the same commit (a
// Role granted, a different refusal) is a new event.
func (a *Announcer) SyncFailed(ctx context.Context, repo *knitv1alpha1.GitRepository, c plan.Commit, err error) {
	a.send(ctx, repo.Namespace, "", events.Occurrence{
		Type:     events.TypeSyncFailed,
		Resource: events.Resource{Kind: "GitRepository", Namespace: repo.Namespace, Name: repo.Name},
		Key:      strings.Join([]string{string(repo.UID), c.Branch, c.SHA, err.Error()}, "\x00"),
		Data: events.Data{
			Repo: repo.Name, Branch: c.Branch, Commit: c.SHA, Author: c.Author, Message: firstLine(c.Message),
			Failure: &events.Failure{Reason: "CommitRejected", Message: err.Error()},
		},
	})
}

// CanaryFailed announces that pull request pr's canary of commit was
// rolled back, with the analysis' reason.
func (a *Announcer) CanaryFailed(ctx context.Context, pr *knitv1alpha1.PullRequest, commit, revision, reason string) {
	a.send(ctx, pr.Namespace, strconv.FormatInt(pr.Spec.Number, 10), events.Occurrence{
		Type:     events.TypeCanaryFailed,
		Resource: events.Resource{Kind: "PullRequest", Namespace: pr.Namespace, Name: pr.Name},
		Key:      fmt.Sprintf("%s %s", pr.UID, commit),
		Data: events.Data{
			Repo: pr.Spec.Repository, Branch: pr.Spec.HeadBranch, Commit: commit, Revision: revision,
			Failure: &events.Failure{Reason: "CanaryFailed", Message: reason},
		},
	})
}

// RolloutFailed implements gitrepository.Announcer: a push's rollout of
// ro.Revision was rolled back, with the analysis' numbers. One event per
// rollout (repository, Service, Revision): the reconciler calls it once,
// at the transition.
func (a *Announcer) RolloutFailed(ctx context.Context, repo *knitv1alpha1.GitRepository, ro knitv1alpha1.RolloutStatus) {
	a.send(ctx, repo.Namespace, "", events.Occurrence{
		Type:     events.TypeRolloutFailed,
		Resource: events.Resource{Kind: "Service", Namespace: repo.Namespace, Name: ro.Service},
		Key:      strings.Join([]string{string(repo.UID), ro.Branch, ro.Service, ro.Revision}, "\x00"),
		Data: events.Data{
			Repo: repo.Name, Branch: ro.Branch, Commit: ro.Commit, Revision: ro.Revision,
			Failure: &events.Failure{Reason: "RolloutFailed", Message: fmt.Sprintf("%s; %s has all traffic again", ro.Message, ro.Stable)},
		},
	})
}
