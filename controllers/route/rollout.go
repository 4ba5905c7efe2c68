package route

import (
	"time"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/route/resources"
)

// gradual is one reconcile's view of a Route's gradual rollout: the
// state stepped to now, and the duration it spreads over.
type gradual struct {
	state    *resources.Rollout
	duration time.Duration
	now      time.Time
}

// stepRollout moves rt's gradual rollout on (resources.Rollout.Step) and
// returns the traffic its status should show: resolved, with targets
// mid-rollout split across their Revisions. The previous state is the
// rollout annotation in rt's status, else the split its status traffic
// serves. With no rollout duration it returns resolved and a nil gradual.
func stepRollout(rt *servingv1.Route, resolved []servingv1.TrafficTarget, snap resources.Snapshot, n *config.Network, now time.Time) ([]servingv1.TrafficTarget, *gradual) {
	d := n.RouteRolloutDuration(rt.Annotations)
	if d <= 0 {
		return resolved, nil
	}
	prev := resources.ParseRollout(rt.Status.Annotations[resources.RolloutAnnotation])
	if prev != nil && !revisionsExist(prev, snap) {
		prev = nil // a Revision of the split was deleted: start afresh
	}
	if prev == nil {
		prev = resources.ServedRollout(rt.Spec.Traffic, rt.Status.Traffic)
	}
	state := resources.BuildRollout(rt.Spec.Traffic, resolved).Step(prev, now.UnixNano())
	return resources.ApplyRollout(rt.Spec.Traffic, resolved, state), &gradual{state: state, duration: d, now: now}
}

// revisionsExist says whether every Revision in ro is still there.
func revisionsExist(ro *resources.Rollout, snap resources.Snapshot) bool {
	for _, c := range ro.Configurations {
		for _, r := range c.Revisions {
			if _, ok := snap.Revisions[r.RevisionName]; !ok {
				return false
			}
		}
	}
	return true
}

// finish times the rollouts the ingress now serves the first 1% of
// (served: rt's status traffic is what the ingress routes by), keeps the
// state in rt's status annotations while a rollout is under way and drops
// it after, and says when the next step is due (0: none). While a rollout
// is under way IngressReady is Unknown (RolloutInProgress), as Knative's:
// the Route does not serve its spec's traffic yet.
func (g *gradual) finish(rt *servingv1.Route, served bool) time.Duration {
	if g == nil || g.state.Done() {
		setRolloutAnnotation(rt, "")
		return 0
	}
	if served {
		g.state.ObserveReady(g.now.UnixNano(), g.duration)
	}
	rt.Status.MarkIngressRolloutInProgress()
	setRolloutAnnotation(rt, g.state.Encode())
	next := g.state.NextStep()
	if next == 0 {
		return 0 // untimed: the ingress's own recheck brings the next pass
	}
	return max(time.Duration(next-g.now.UnixNano()), time.Millisecond)
}

// setRolloutAnnotation sets (v != "") or removes the rollout state in
// rt's status annotations.
func setRolloutAnnotation(rt *servingv1.Route, v string) {
	if v == "" {
		delete(rt.Status.Annotations, resources.RolloutAnnotation)
		if len(rt.Status.Annotations) == 0 {
			rt.Status.Annotations = nil
		}
		return
	}
	if rt.Status.Annotations == nil {
		rt.Status.Annotations = map[string]string{}
	}
	rt.Status.Annotations[resources.RolloutAnnotation] = v
}
