package runtime

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The kubelet's reasons in a container's state, where the runtime has no
// reason of its own (reasons.go) to give.
const (
	reasonContainerCreating = "ContainerCreating"
	reasonCompleted         = "Completed"
	reasonError             = "Error"
	reasonOOMKilled         = "OOMKilled"
)

// podSnapshot is a replica at one instant as its Pod's status shows it.
type podSnapshot struct {
	// unschedulable: the replica waits for room, in the scheduler's words.
	unschedulable string
	created       time.Time
	ip, hostIP    string // "" until the replica has a network
	terminating   bool
	containers    []containerState // by index in spec.Containers
	inits         []containerState // by index in spec.InitContainers
}

// podSnapshot copies what the Pod's status is computed from.
func (r *replica) podSnapshot() podSnapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := podSnapshot{created: r.created, terminating: r.terminating, containers: append([]containerState(nil), r.containers...),
		inits: append([]containerState(nil), r.inits...), unschedulable: r.unschedulable}
	if r.net != nil {
		s.ip, s.hostIP = r.net.ip, r.net.hostIP()
	}
	return s
}

// exitOf is how a container's process ended, as the kubelet records it in
// state.terminated and then lastState.terminated: its exit code (128 +
// the signal when killed), reason OOMKilled, Completed or Error, and,
// under terminationMessagePolicy FallbackToLogsOnError, the end of its
// output as the message of a failure (there is no termination-log file to
// read first: the process writes to this machine's /dev).
func exitOf(p *process, c *corev1.Container, oomKilled bool, lines []string) *corev1.ContainerStateTerminated {
	_, code := p.exitDescription()
	t := &corev1.ContainerStateTerminated{ExitCode: int32(code), StartedAt: apiTime(p.started), FinishedAt: apiTime(time.Now())}
	switch {
	case oomKilled:
		t.Reason = reasonOOMKilled
	case code == 0:
		t.Reason = reasonCompleted
	default:
		t.Reason = reasonError
	}
	if code != 0 && c.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError {
		t.Message = strings.Join(lines, "\n")
	}
	return t
}

// recordExit keeps a process's end, and the one before it for a
// container that has stopped for good (its lastState then).
func (c *containerState) recordExit(t *corev1.ContainerStateTerminated) {
	c.prevExit, c.exit = c.exit, t
}

// apiTime is t as the API stores it, to the second, so that what was
// written compares equal to what is computed again.
func apiTime(t time.Time) metav1.Time { return metav1.NewTime(t).Rfc3339Copy() }

// podStatus is the status the kubelet would report for the replica, with
// prev the status last written (nil before the first): its conditions keep
// their transition times while their status holds.
//
// Phase is Pending while an init container has not completed or a
// container has not started yet, else Running (restartPolicy Always: a
// crashed container is restarting). PodScheduled is True once placed;
// Initialized once every init container has completed (else False,
// ContainersNotInitialized, naming the others); ContainersReady and
// Ready when every container is. A container runs (started: no startup
// probe holds it), waits with the runtime's own failure as reason and
// message — BuildFailed, CreateContainerConfigError, CrashLoopBackOff
// with the exit and output, … the words the Deployment's ReplicaFailure
// carries — or ContainerCreating (PodInitializing in a pod with init
// containers, as the kubelet has it), or, once the replica stops, is
// terminated. Init containers are reported alike in
// initContainerStatuses, a completed one terminated (Completed) and
// ready. imageID and containerID are an image's digest and run; for
// ko:// and knit:// they stay empty: no image was pulled and no
// container runtime holds it, and the Revision's digests must not come
// from a ko build.
//
// A replica waiting for room on this machine is a Pod the scheduler has
// not placed: Pending, PodScheduled False (Unschedulable, with the
// scheduler's message) and nothing else.
func podStatus(spec *corev1.PodSpec, snap podSnapshot, prev *corev1.PodStatus, now time.Time) corev1.PodStatus {
	if snap.unschedulable != "" {
		s := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: snap.unschedulable,
		}}}
		stampPodConditions(s.Conditions, prev, now)
		return s
	}
	s := corev1.PodStatus{Phase: corev1.PodRunning, StartTime: ptr.To(apiTime(snap.created))}
	if snap.ip != "" {
		s.PodIP, s.PodIPs = snap.ip, []corev1.PodIP{{IP: snap.ip}}
		s.HostIP, s.HostIPs = snap.hostIP, []corev1.HostIP{{IP: snap.hostIP}}
	}
	var incomplete []string
	s.InitContainerStatuses, incomplete = initContainerStatuses(spec, snap, now)
	if len(incomplete) > 0 {
		s.Phase = corev1.PodPending
	}
	allReady := len(spec.Containers) > 0
	waiting := waitingReason(spec)
	for i, c := range spec.Containers {
		cs := containerStatus(&c, snap.containers[i], snap.terminating, waiting, now)
		allReady = allReady && cs.Ready
		if cs.State.Waiting != nil && cs.LastTerminationState.Terminated == nil {
			s.Phase = corev1.PodPending
		}
		s.ContainerStatuses = append(s.ContainerStatuses, cs)
	}
	ready := corev1.ConditionFalse
	if allReady {
		ready = corev1.ConditionTrue
	}
	s.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		initializedCondition(incomplete),
		{Type: corev1.ContainersReady, Status: ready},
		{Type: corev1.PodReady, Status: ready},
	}
	if !allReady {
		s.Conditions[2].Reason, s.Conditions[3].Reason = "ContainersNotReady", "ContainersNotReady"
		if names := notReady(s.ContainerStatuses); names != "" {
			msg := "containers with unready status: [" + names + "]"
			s.Conditions[2].Message, s.Conditions[3].Message = msg, msg
		}
	}
	stampPodConditions(s.Conditions, prev, now)
	return s
}

// stampPodConditions gives each condition its transition time: prev's
// while its status holds, else now.
func stampPodConditions(conds []corev1.PodCondition, prev *corev1.PodStatus, now time.Time) {
	for i := range conds {
		c := &conds[i]
		c.LastTransitionTime = apiTime(now)
		if prev == nil {
			continue
		}
		for _, o := range prev.Conditions {
			if o.Type == c.Type && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
	}
}

// containerStatus is one container's (or init container's) part of
// podStatus; waiting is the reason it waits with before it first starts
// (waitingReason). A completed init container is terminated, its run
// before in lastState, as a stopping replica's containers are.
func containerStatus(c *corev1.Container, st containerState, terminating bool, waiting string, now time.Time) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, RestartCount: int32(st.restarts),
		Ready: st.ready && (st.running || st.completed), Started: ptr.To(st.running),
		ImageID: st.imageID, ContainerID: st.containerID,
	}
	last := st.exit
	switch f := st.failure(now); {
	case st.running:
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: apiTime(st.startedAt)}
	case (terminating || st.completed) && st.exit != nil:
		cs.State.Terminated, last = st.exit, st.prevExit
	case f != nil:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: f.Reason, Message: f.Message}
	default:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: waiting}
	}
	if last != nil {
		cs.LastTerminationState.Terminated = last
	}
	return cs
}

// notReady names the containers that are not ready, as the kubelet's
// condition message does.
func notReady(statuses []corev1.ContainerStatus) string {
	var names []string
	for _, cs := range statuses {
		if !cs.Ready {
			names = append(names, cs.Name)
		}
	}
	return strings.Join(names, " ")
}
