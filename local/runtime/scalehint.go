package runtime

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
)

// scaleHintFor bounds how long a hint may stand in for the write it
// announces: the write comes back through the watch within milliseconds,
// and one that never lands (the Deployment deleted first) must not keep
// a replica running.
const scaleHintFor = 5 * time.Second

// scaleHint is a scale-up the autoscaler is writing: at least replicas
// for the Deployment at generation, the spec the write is based on, until
// the watch shows a newer spec (the write, or anyone's) or until passes.
// The generation, not the resourceVersion: the runtime's own status
// writes, which may land before the scale, leave it alone.
type scaleHint struct {
	generation int64
	replicas   int32
	until      time.Time
}

// HintScale is told by the PodAutoscaler reconciler, in the same
// process, that it is about to scale dep up to replicas. The runtime
// starts the replicas now instead of when the write has gone through
// the API server and come back through its watch: a cold start's first
// hop (5 ms on an idle machine, 12–15 ms while another start loads it).
// The Deployment's own spec takes over as soon as the watch shows the
// write, or any other change; a hint never stops or scales down.
func (rt *Runtime) HintScale(dep *appsv1.Deployment, replicas int32) {
	key := types.NamespacedName{Namespace: dep.Namespace, Name: dep.Name}
	if !managed(dep) {
		return
	}
	rt.mu.Lock()
	if rt.hints == nil {
		rt.hints = map[types.NamespacedName]scaleHint{}
	}
	rt.hints[key] = scaleHint{generation: dep.Generation, replicas: replicas, until: time.Now().Add(scaleHintFor)}
	rt.mu.Unlock()
	rt.replicaChanged(key)
}

// replicasWanted is how many replicas of d run at now: spec.replicas, or
// more while a hint based on this very spec of d stands. A hint that
// no longer applies is dropped. Called with rt.mu held.
func (rt *Runtime) replicasWanted(key types.NamespacedName, d *appsv1.Deployment, now time.Time) int32 {
	want := desiredReplicas(d)
	h, ok := rt.hints[key]
	if !ok {
		return want
	}
	if h.generation != d.Generation || !now.Before(h.until) {
		delete(rt.hints, key)
		return want
	}
	return max(want, h.replicas)
}
