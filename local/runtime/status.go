package runtime

import (
	"fmt"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// defaultProgressDeadline is Kubernetes' default progressDeadlineSeconds.
const defaultProgressDeadline = 600 * time.Second

// desiredReplicas is spec.replicas, which Kubernetes defaults to 1.
func desiredReplicas(d *appsv1.Deployment) int32 { return ptr.Deref(d.Spec.Replicas, 1) }

// progressDeadline is spec.progressDeadlineSeconds; 0 means none
// (Kubernetes spells "none" as MaxInt32).
func progressDeadline(d *appsv1.Deployment) time.Duration {
	s := ptr.Deref(d.Spec.ProgressDeadlineSeconds, int32(defaultProgressDeadline/time.Second))
	if s == math.MaxInt32 {
		return 0
	}
	return time.Duration(s) * time.Second
}

// progressClock remembers when a Deployment last made progress, the clock
// ProgressDeadlineExceeded is measured on: a change of spec (template or
// replicas) or one more ready replica of the current template restarts it.
type progressClock struct {
	since      time.Time
	generation int64
	ready      int32
}

// observe records the Deployment's generation and ready current replicas
// and returns when progress was last made.
func (p *progressClock) observe(generation int64, readyUpdated int32, now time.Time) time.Time {
	if p.since.IsZero() || generation != p.generation || readyUpdated > p.ready {
		p.since = now
	}
	p.generation, p.ready = generation, readyUpdated
	return p.since
}

// readyUpdated counts the ready, live replicas of the template hash.
func readyUpdated(replicas []replicaView, hash string) int32 {
	var n int32
	for _, r := range replicas {
		if !r.Terminating && r.Ready && r.Hash == hash {
			n++
		}
	}
	return n
}

// makeStatus is the Deployment's status as Kubernetes' deployment
// controller would write it for these replicas, plus a ReplicaFailure
// condition saying why replicas are not ready: refusal (FailedCreate, the
// API server's no to its Pods, as the ReplicaSet controller reports it)
// before anything the replicas say. wake is when the status can change by
// time alone (minReadySeconds, the progress deadline); 0 if never.
func makeStatus(d *appsv1.Deployment, replicas []replicaView, hash string, progressSince time.Time, refusal *failure, now time.Time) (s appsv1.DeploymentStatus, wake time.Duration) {
	s.ObservedGeneration = d.Generation
	minReady := time.Duration(d.Spec.MinReadySeconds) * time.Second
	worst := refusal
	for _, r := range replicas {
		if r.Terminating {
			continue
		}
		s.Replicas++
		updated := r.Hash == hash
		if updated {
			s.UpdatedReplicas++
			if refusal == nil && r.Failure.worse(worst) {
				worst = r.Failure
			}
		}
		if !r.Ready {
			continue
		}
		s.ReadyReplicas++
		if availableAt := r.ReadySince.Add(minReady); now.Before(availableAt) {
			wake = earliest(wake, availableAt.Sub(now))
		} else {
			s.AvailableReplicas++
		}
	}
	desired := desiredReplicas(d)
	s.UnavailableReplicas = max(0, max(desired, s.Replicas)-s.AvailableReplicas)

	conds := []appsv1.DeploymentCondition{availableCondition(s.AvailableReplicas >= desired)}
	progressing, untilDeadline := progressingCondition(d, s, worst, progressSince, now)
	conds = append(conds, progressing)
	wake = earliest(wake, untilDeadline)
	if worst != nil {
		conds = append(conds, appsv1.DeploymentCondition{
			Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: worst.Reason, Message: worst.Message,
		})
	}
	s.Conditions = stampConditions(d.Status.Conditions, conds, now)
	return s, wake
}

func availableCondition(available bool) appsv1.DeploymentCondition {
	if available {
		return appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
			Reason: ReasonMinimumReplicasAvailable, Message: "Deployment has minimum availability."}
	}
	return appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse,
		Reason: ReasonMinimumReplicasUnavailable, Message: "Deployment does not have minimum availability."}
}

// progressingCondition is complete, in progress, or past its deadline;
// untilDeadline is how long an incomplete rollout has left (0 if none).
func progressingCondition(d *appsv1.Deployment, s appsv1.DeploymentStatus, worst *failure, since, now time.Time) (c appsv1.DeploymentCondition, untilDeadline time.Duration) {
	desired := desiredReplicas(d)
	c.Type = appsv1.DeploymentProgressing
	if s.UpdatedReplicas == desired && s.Replicas == desired && s.AvailableReplicas == desired {
		c.Status, c.Reason = corev1.ConditionTrue, ReasonNewReplicaSetAvailable
		c.Message = fmt.Sprintf("Deployment %q has successfully progressed.", d.Name)
		return c, 0
	}
	deadline := progressDeadline(d)
	if deadline > 0 && !now.Before(since.Add(deadline)) {
		c.Status, c.Reason = corev1.ConditionFalse, ReasonProgressDeadlineExceeded
		c.Message = fmt.Sprintf("Deployment %q did not become available within %s.", d.Name, deadline)
		if worst != nil {
			c.Message = fmt.Sprintf("Deployment %q did not become available within %s: %s", d.Name, deadline, worst.Message)
		}
		return c, 0
	}
	c.Status, c.Reason = corev1.ConditionTrue, ReasonReplicaSetUpdated
	c.Message = fmt.Sprintf("Deployment %q is progressing.", d.Name)
	if deadline > 0 {
		untilDeadline = since.Add(deadline).Sub(now)
	}
	return c, untilDeadline
}

// stampConditions gives each new condition its times: an unchanged one
// keeps the old times, one whose status is unchanged keeps its transition
// time, anything else happens now.
func stampConditions(old, conds []appsv1.DeploymentCondition, now time.Time) []appsv1.DeploymentCondition {
	t := metav1.NewTime(now)
	for i := range conds {
		c := &conds[i]
		c.LastUpdateTime, c.LastTransitionTime = t, t
		for _, o := range old {
			if o.Type != c.Type || o.Status != c.Status {
				continue
			}
			c.LastTransitionTime = o.LastTransitionTime
			if o.Reason == c.Reason && o.Message == c.Message {
				c.LastUpdateTime = o.LastUpdateTime
			}
		}
	}
	return conds
}

// earliest is the sooner of two waits, where 0 means "no wait".
func earliest(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	default:
		return min(a, b)
	}
}
