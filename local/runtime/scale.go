package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// templateHash names a pod template, like Kubernetes' pod-template-hash:
// replicas of another hash belong to an older rollout.
func templateHash(t *corev1.PodTemplateSpec) string {
	b, _ := json.Marshal(t) // a PodTemplateSpec always marshals
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:10]
}

// scalePlan is what to do to a Deployment's replicas.
type scalePlan struct {
	start int      // new replicas of the current template
	stop  []string // replica IDs
}

// planScale moves replicas towards `desired` ready replicas of template
// `hash`, the way a RollingUpdate with maxUnavailable 0 does: replicas of
// an older template keep serving until enough current ones are ready
// (those not ready are stopped at once; they serve nothing). Extra current
// replicas go not-ready first, then newest first, as Kubernetes picks pods
// to delete.
func planScale(replicas []replicaView, hash string, desired int32) scalePlan {
	var current, old []replicaView
	for _, r := range replicas {
		switch {
		case r.Terminating:
		case r.Hash == hash:
			current = append(current, r)
		default:
			old = append(old, r)
		}
	}
	var plan scalePlan
	if n := int(desired) - len(current); n > 0 {
		plan.start = n
	}
	if extra := len(current) - int(desired); extra > 0 {
		slices.SortStableFunc(current, func(a, b replicaView) int {
			if a.Ready != b.Ready {
				if !a.Ready {
					return -1
				}
				return 1
			}
			return b.Created.Compare(a.Created)
		})
		for _, r := range current[:extra] {
			plan.stop = append(plan.stop, r.ID)
		}
		current = current[extra:]
	}
	ready := 0
	for _, r := range current {
		if r.Ready {
			ready++
		}
	}
	for _, r := range old {
		if ready >= int(desired) || !r.Ready {
			plan.stop = append(plan.stop, r.ID)
		}
	}
	return plan
}
