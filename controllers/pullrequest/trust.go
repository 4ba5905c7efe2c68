package pullrequest

import (
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/canary"
	prmodel "github.com/knitops/knit/gitsync/pullrequest"
)

// planFor is the canary pr asks for, read only from where its author's
// say is bounded:
//
//   - a label is set by a maintainer (forges let only them) and is taken
//     as written;
//   - the description and the head's knit.dev/canary annotation are the
//     author's text: their thresholds may only be stricter than the
//     defaults (atLeastAsStrict), never looser, and a fork's are not read
//     at all, so a stranger cannot ask for 100% at once;
//   - automerge is never read from any of them, only from the
//     knit/automerge label (prmodel.AutoMerge).
func planFor(pr *knitv1alpha1.PullRequest) (canary.Plan, canary.Source, error) {
	description, annotation := pr.Spec.Description, pr.Status.CanaryAnnotation
	if prmodel.IsFork(pr) {
		description, annotation = "", ""
	}
	p, src, err := canary.Resolve(description, pr.Spec.Labels, annotation)
	if err != nil || src == canary.SourceNone {
		return p, src, err
	}
	if src != canary.SourceLabel {
		p.Thresholds = atLeastAsStrict(p.Thresholds, canary.DefaultThresholds())
	}
	p.AutoMerge = prmodel.AutoMerge(pr)
	return p, src, nil
}

// atLeastAsStrict is asked with each threshold tightened to floor's where
// asked is looser: fewer 5xx points, a lower p99 ratio and slack, more
// requests before a verdict.
func atLeastAsStrict(asked, floor canary.Thresholds) canary.Thresholds {
	return canary.Thresholds{
		Max5xxPoints: min(asked.Max5xxPoints, floor.Max5xxPoints),
		MaxP99Ratio:  min(asked.MaxP99Ratio, floor.MaxP99Ratio),
		P99Slack:     min(asked.P99Slack, floor.P99Slack),
		MinRequests:  max(asked.MinRequests, floor.MinRequests),
	}
}

// mayMerge says whether a promoted canary of commit may be merged: the
// maintainers asked for it, the commit is approved (a fork's), and the
// head the forge last reported is still commit. The merge call pins the
// commit as well, so the forge refuses it if the head moved since.
func mayMerge(pr *knitv1alpha1.PullRequest, commit string) bool {
	if commit == "" || !prmodel.AutoMerge(pr) || !prmodel.Approved(pr, commit) {
		return false
	}
	return pr.Spec.HeadCommit == "" || pr.Spec.HeadCommit == commit
}
