package revision

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/revision/resources"
)

// Waiting reasons of the kubelet that are progress, not failure: the
// container is being created, or waits for its init containers. Every
// other reason (ErrImagePull, ImagePullBackOff, InvalidImageName,
// CreateContainerConfigError, RunContainerError, CrashLoopBackOff, …)
// says the container cannot run until something changes.
var startingReasons = []string{"", "ContainerCreating", "PodInitializing"}

// reasonImagePullBackOff is the kubelet waiting to retry a pull that
// failed with reasonErrImagePull; the pull's error says why, the back-off
// only that it waits.
const (
	reasonImagePullBackOff = "ImagePullBackOff"
	reasonErrImagePull     = "ErrImagePull"
)

// podFailure is why a pod of the Revision does not run, as its kubelet
// or the scheduler reports it.
type podFailure struct {
	// Unschedulable: no node takes the pod, a failure of the Revision's
	// resources (ResourcesAvailable); any other is its container's
	// (ContainerHealthy).
	Unschedulable   bool
	Reason, Message string
}

// failureOf is the pod's failure, nil when it runs or is still starting:
// not scheduled; else its first container, init containers first, that
// exited (a Deployment's containers restart always, so any exit is a
// crash; an init container's only with a non-zero code), now or before
// its last restart; else the first that waits for a reason other than
// startingReasons. The queue-proxy is knit's, not the app's, and is left
// out as Knative leaves it out. A pod being deleted reports nothing: its
// containers exit because they are told to.
func failureOf(p *corev1.Pod) *podFailure {
	if p.DeletionTimestamp != nil {
		return nil
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return &podFailure{Unschedulable: true, Reason: c.Reason, Message: c.Message}
		}
	}
	for _, cs := range p.Status.InitContainerStatuses {
		if t := lastExit(cs); t != nil && t.ExitCode != 0 {
			return exitFailure(t)
		}
	}
	app := slices.DeleteFunc(slices.Clone(p.Status.ContainerStatuses), func(cs corev1.ContainerStatus) bool {
		return cs.Name == resources.QueueContainerName
	})
	for _, cs := range app {
		if t := lastExit(cs); t != nil {
			return exitFailure(t)
		}
	}
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), app...) {
		if w := cs.State.Waiting; w != nil && !slices.Contains(startingReasons, w.Reason) {
			msg := w.Message
			if msg == "" {
				msg = fmt.Sprintf("container %s is waiting: %s", cs.Name, w.Reason)
			}
			return &podFailure{Reason: w.Reason, Message: msg}
		}
	}
	return nil
}

// lastExit is how the container last exited: now, or before the restart
// it runs or waits for.
func lastExit(cs corev1.ContainerStatus) *corev1.ContainerStateTerminated {
	if t := cs.State.Terminated; t != nil {
		return t
	}
	return cs.LastTerminationState.Terminated
}

// exitFailure is an exit as Knative reports it: reason ExitCode<n>, the
// message the container left (its termination message, or its last log
// lines under FallbackToLogsOnError), else the kubelet's reason (Error,
// OOMKilled).
func exitFailure(t *corev1.ContainerStateTerminated) *podFailure {
	msg := strings.TrimSpace(t.Message)
	switch {
	case msg != "":
	case t.Reason != "":
		msg = t.Reason
	default:
		msg = "container exited with no error"
		if t.ExitCode != 0 {
			msg = fmt.Sprintf("container exited with code %d", t.ExitCode)
		}
	}
	return &podFailure{Reason: fmt.Sprintf("ExitCode%d", t.ExitCode), Message: "Container failed with: " + msg}
}

// podsFailure is the failure the Revision reports of its pods: the first
// pod's by name that fails, one whose container waits for
// ImagePullBackOff only when no other pod says more.
func podsFailure(pods []corev1.Pod) *podFailure {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	var backOff *podFailure
	for i := range pods {
		f := failureOf(&pods[i])
		switch {
		case f == nil:
		case f.Reason == reasonImagePullBackOff:
			if backOff == nil {
				backOff = f
			}
		default:
			return f
		}
	}
	return backOff
}

// markPodFailure reports the pods' failure on the Revision when it wants
// replicas and none is ready; a ready replica proves the Revision runs,
// and a failing pod beside it (a node that cannot pull) is not the
// Revision's failure. prev is ContainerHealthy before this reconcile: an
// ImagePullBackOff keeps the ErrImagePull it backs off from, so the
// Revision says why the pull failed and does not flip between the two.
func markPodFailure(s *servingv1.RevisionStatus, prev *duckv1.Condition, wanted, ready int32, pods []corev1.Pod) {
	if wanted == 0 || ready > 0 {
		return
	}
	f := podsFailure(pods)
	switch {
	case f == nil:
	case f.Unschedulable:
		s.MarkResourcesAvailableFalse(f.Reason, f.Message)
	case f.Reason == reasonImagePullBackOff && prev.IsFalse() && prev.Reason == reasonErrImagePull:
		s.MarkContainerHealthyFalse(prev.Reason, prev.Message)
	default:
		s.MarkContainerHealthyFalse(f.Reason, f.Message)
	}
}
