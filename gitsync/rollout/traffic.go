package rollout

import (
	"errors"

	"k8s.io/utils/ptr"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// ErrTrafficDeclared refuses a rollout of a Service whose Git traffic
// splits by hand: steps and a hand-written split cannot both decide it.
var ErrTrafficDeclared = errors.New(AnnotationKey + " rolls out a Service whose traffic goes to its latest Revision; " +
	"drop the percent-carrying spec.traffic targets or the rollout (tag-only targets may stay)")

// Traffic is the Service's traffic during r: Git's, with the target that
// sends traffic to the latest Revision split between the stable Revision
// (the rest) and the candidate (the step's percent), both pinned by name;
// after a rollback, all of it to the stable one. A promoted rollout, or
// none, leaves Git's traffic as it is. Tag-only targets are kept.
func Traffic(git []servingv1.TrafficTarget, r *knitv1alpha1.RolloutStatus) ([]servingv1.TrafficTarget, error) {
	if r == nil || r.Phase == knitv1alpha1.CanaryPromoted {
		// Refused from the first deploy on, not first at the next push.
		return git, Check(git)
	}
	if len(git) == 0 {
		git = []servingv1.TrafficTarget{{LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}
	}
	out := make([]servingv1.TrafficTarget, 0, len(git)+1)
	split := false
	for _, t := range git {
		if ptr.Deref(t.Percent, 0) == 0 {
			out = append(out, *t.DeepCopy())
			continue
		}
		if split || !ptr.Deref(t.LatestRevision, false) || ptr.Deref(t.Percent, 0) != 100 {
			return nil, ErrTrafficDeclared
		}
		split = true
		percent := min(max(r.Percent, 0), 100)
		stable := *t.DeepCopy()
		stable.LatestRevision, stable.RevisionName, stable.Percent = ptr.To(false), r.Stable, ptr.To(100-percent)
		out = append(out, stable)
		if percent > 0 && r.Phase == knitv1alpha1.CanaryProgressing {
			out = append(out, servingv1.TrafficTarget{RevisionName: r.Revision, LatestRevision: ptr.To(false), Percent: ptr.To(percent)})
		}
	}
	return out, nil
}

// Check refuses Git traffic a rollout cannot step: anything but all of it
// to the latest Revision, besides tag-only targets.
func Check(git []servingv1.TrafficTarget) error {
	for _, t := range git {
		p := ptr.Deref(t.Percent, 0)
		if p != 0 && (p != 100 || !ptr.Deref(t.LatestRevision, false)) {
			return ErrTrafficDeclared
		}
	}
	return nil
}
