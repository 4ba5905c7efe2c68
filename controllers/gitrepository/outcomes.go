package gitrepository

import (
	"cmp"
	"slices"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// previewStatuses are what status.previews records after a pass: the
// outcome of each pull request it previewed, by number. A pull request
// into a branch whose head was not synced this pass (it failed, is
// missing, or builds) keeps the entry it had, as the branch keeps its
// objects and its previews are not pruned: nothing about it was learnt.
// Pull requests closed, deleted or no longer into a tracked branch drop
// out, and with them their status.
func (p *pass) previewStatuses() []knitv1alpha1.PreviewStatus {
	var out []knitv1alpha1.PreviewStatus
	for number, o := range p.outcomes {
		out = append(out, o.status(number))
	}
	for i := range p.prs {
		pr := &p.prs[i]
		if _, done := p.outcomes[pr.Spec.Number]; done || !isOpen(pr) || !p.failed[pr.Spec.BaseBranch] {
			continue
		}
		if kept := p.repo.Status.Preview(pr.Spec.Number); kept != nil {
			out = append(out, *kept)
		}
	}
	slices.SortFunc(out, func(a, b knitv1alpha1.PreviewStatus) int { return cmp.Compare(a.Number, b.Number) })
	return out
}

// status is the outcome as status.previews records it.
func (o *previewOutcome) status(number int64) knitv1alpha1.PreviewStatus {
	s := knitv1alpha1.PreviewStatus{
		Number: number, Commit: o.commit, RevisionNames: slices.Clone(o.revisions),
		BaseService: o.baseService, CanaryAnnotation: o.canaryAnnotation, Message: o.err, Services: slices.Clone(o.services),
	}
	switch {
	case o.err != "":
		s.Phase = knitv1alpha1.PreviewFailed
	case o.ready:
		s.Phase = knitv1alpha1.PreviewReady
	default:
		s.Phase = knitv1alpha1.PreviewDeploying
	}
	return s
}
