package runtime

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's words for a pod whose init containers have not all
// completed: the reason its containers wait with, and the reason of its
// Initialized condition.
const (
	reasonPodInitializing          = "PodInitializing"
	reasonContainersNotInitialized = "ContainersNotInitialized"
)

// containerRef names one of a replica's containers: the index of a
// container in spec.Containers, or with init set of an init container in
// spec.InitContainers. The pod spec keeps the two lists apart, and so do
// the replica's states (replica.containers, replica.inits), so every
// index elsewhere (probes, ports, misbinding) stays one of
// spec.Containers.
type containerRef struct {
	i    int
	init bool
}

// regular names spec.Containers[i].
func regular(i int) containerRef { return containerRef{i: i} }

// initContainer names spec.InitContainers[i].
func initContainer(i int) containerRef { return containerRef{i: i, init: true} }

// containerSpec is the container ref names.
func (r *replica) containerSpec(ref containerRef) *corev1.Container {
	if ref.init {
		return &r.spec.InitContainers[ref.i]
	}
	return &r.spec.Containers[ref.i]
}

// stateLocked is what the replica knows of the container ref names.
// Called with r.mu held.
func (r *replica) stateLocked(ref containerRef) *containerState {
	if ref.init {
		return &r.inits[ref.i]
	}
	return &r.containers[ref.i]
}

// initialize runs the replica's init containers as the kubelet runs them
// in a new pod sandbox: one at a time, in order, each through the same
// start path as a container (runContainer: its image, environment,
// volumes, user, cgroup under the pod's, the replica's network) and
// again with backoff until a run exits 0, before any container starts.
// It is true once all have completed, false when ctx ended first.
//
// It runs once in a replica's life, so a container that crashes later
// restarts alone, as the kubelet runs init containers again only for a
// new sandbox; a replica a scale-up adds is a new sandbox, and runs them.
func (r *replica) initialize(ctx context.Context) bool {
	for i := range r.spec.InitContainers {
		if !r.runContainer(ctx, initContainer(i)) {
			return false
		}
	}
	if n := len(r.spec.InitContainers); n > 0 {
		r.log.Info("Init containers completed; starting the containers", "initContainers", n)
	}
	return true
}

// complete records an init container's run that exited 0: it is done for
// good, and ready, as the kubelet says of a completed init container.
func (s *containerState) complete(exit *corev1.ContainerStateTerminated) {
	s.running, s.pid, s.completed, s.ready = false, 0, true, true
	s.recordExit(exit)
}

// waitingReason is the reason a container that has not started waits
// with, when the runtime has none of its own: the kubelet's
// PodInitializing in a pod with init containers (its containers, and its
// init containers not run yet), else ContainerCreating.
func waitingReason(spec *corev1.PodSpec) string {
	if len(spec.InitContainers) > 0 {
		return reasonPodInitializing
	}
	return reasonContainerCreating
}

// initContainerStatuses are the init containers' part of podStatus, and
// the names of those that have not completed.
func initContainerStatuses(spec *corev1.PodSpec, snap podSnapshot, now time.Time) (statuses []corev1.ContainerStatus, incomplete []string) {
	waiting := waitingReason(spec)
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		statuses = append(statuses, containerStatus(c, snap.inits[i], snap.terminating, waiting, now))
		if !snap.inits[i].completed {
			incomplete = append(incomplete, c.Name)
		}
	}
	return statuses, incomplete
}

// initializedCondition is the Pod's Initialized condition: True once
// every init container has completed, else False with the kubelet's
// reason and message naming the others.
func initializedCondition(incomplete []string) corev1.PodCondition {
	if len(incomplete) == 0 {
		return corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	}
	return corev1.PodCondition{
		Type: corev1.PodInitialized, Status: corev1.ConditionFalse, Reason: reasonContainersNotInitialized,
		Message: "containers with incomplete status: [" + strings.Join(incomplete, " ") + "]",
	}
}
