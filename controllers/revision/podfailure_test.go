package revision

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// A pod's container statuses as a kubelet reports them.
func waiting(name, reason, message string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
}

func running(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

// crashLooping is a container the kubelet restarts with back-off after it
// exited with code, leaving message.
func crashLooping(name string, code int32, reason, message string) corev1.ContainerStatus {
	cs := waiting(name, "CrashLoopBackOff", "back-off 40s restarting failed container="+name)
	cs.RestartCount = 3
	cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: message}
	return cs
}

func exited(name string, code int32, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}}}
}

// statusPod is a pod of the Revision named name with these statuses.
func statusPod(name string, statuses ...corev1.ContainerStatus) corev1.Pod {
	p := pod(name)
	p.Status.ContainerStatuses = statuses
	return *p
}

func TestPodsFailure(t *testing.T) {
	const pullErr = `failed to pull and unpack image "docker.io/library/invalidhelloworld:latest": not found`
	queue := running("queue-proxy")
	unschedulable := statusPod("a", waiting("user-container", "", ""))
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu."}}
	deleting := statusPod("a", exited("user-container", 143, "Error"), queue)
	deleting.DeletionTimestamp = &metav1.Time{}
	initFailed := statusPod("a", waiting("user-container", "PodInitializing", ""), queue)
	initFailed.Status.InitContainerStatuses = []corev1.ContainerStatus{crashLooping("setup", 1, "Error", "")}
	initDone := statusPod("a", running("user-container"), queue)
	initDone.Status.InitContainerStatuses = []corev1.ContainerStatus{exited("setup", 0, "Completed")}
	initPull := statusPod("a", waiting("user-container", "PodInitializing", ""), queue)
	initPull.Status.InitContainerStatuses = []corev1.ContainerStatus{waiting("setup", "ErrImagePull", pullErr)}
	tests := []struct {
		name string
		pods []corev1.Pod
		want *podFailure
	}{{
		name: "no pods",
	}, {
		name: "starting: created, initialising, running not ready",
		pods: []corev1.Pod{statusPod("a", waiting("user-container", "ContainerCreating", ""), queue), statusPod("b", running("user-container"), queue), statusPod("c")},
	}, {
		name: "an image that cannot be pulled: the kubelet's reason and message",
		pods: []corev1.Pod{statusPod("a", waiting("user-container", "ErrImagePull", pullErr), queue)},
		want: &podFailure{Reason: "ErrImagePull", Message: pullErr},
	}, {
		name: "an invalid image name",
		pods: []corev1.Pod{statusPod("a", waiting("user-container", "InvalidImageName", `Failed to apply default image tag "UPPER": invalid reference format`), queue)},
		want: &podFailure{Reason: "InvalidImageName", Message: `Failed to apply default image tag "UPPER": invalid reference format`},
	}, {
		name: "a waiting reason without a message names the container",
		pods: []corev1.Pod{statusPod("a", waiting("user-container", "CreateContainerConfigError", ""), queue)},
		want: &podFailure{Reason: "CreateContainerConfigError", Message: "container user-container is waiting: CreateContainerConfigError"},
	}, {
		name: "back-off from a pull: reported when no pod says more",
		pods: []corev1.Pod{statusPod("a", waiting("user-container", "ImagePullBackOff", `Back-off pulling image "x"`), queue)},
		want: &podFailure{Reason: "ImagePullBackOff", Message: `Back-off pulling image "x"`},
	}, {
		name: "back-off from a pull in one pod, the pull's error in another: the error",
		pods: []corev1.Pod{statusPod("a", waiting("user-container", "ImagePullBackOff", `Back-off pulling image "x"`)), statusPod("b", waiting("user-container", "ErrImagePull", pullErr))},
		want: &podFailure{Reason: "ErrImagePull", Message: pullErr},
	}, {
		name: "a crash loop: the exit code and the message the container left",
		pods: []corev1.Pod{statusPod("a", queue, crashLooping("user-container", 5, "Error", "Crashed...\n"))},
		want: &podFailure{Reason: "ExitCode5", Message: "Container failed with: Crashed..."},
	}, {
		name: "an exit without a message: the kubelet's reason",
		pods: []corev1.Pod{statusPod("a", exited("user-container", 137, "OOMKilled"), queue)},
		want: &podFailure{Reason: "ExitCode137", Message: "Container failed with: OOMKilled"},
	}, {
		name: "an exit with neither message nor reason",
		pods: []corev1.Pod{statusPod("a", exited("user-container", 0, ""))},
		want: &podFailure{Reason: "ExitCode0", Message: "Container failed with: container exited with no error"},
	}, {
		name: "running again after a crash: the crash",
		pods: []corev1.Pod{statusPod("a", func() corev1.ContainerStatus {
			cs := crashLooping("user-container", 1, "Error", "panic: boom")
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
			return cs
		}())},
		want: &podFailure{Reason: "ExitCode1", Message: "Container failed with: panic: boom"},
	}, {
		name: "the queue-proxy's state is knit's, not the app's",
		pods: []corev1.Pod{statusPod("a", running("user-container"), crashLooping("queue-proxy", 1, "Error", "bad env"))},
	}, {
		name: "a pod being deleted: its containers were told to exit",
		pods: []corev1.Pod{deleting},
	}, {
		name: "no node takes the pod",
		pods: []corev1.Pod{unschedulable},
		want: &podFailure{Unschedulable: true, Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu."},
	}, {
		name: "an init container that crashes",
		pods: []corev1.Pod{initFailed},
		want: &podFailure{Reason: "ExitCode1", Message: "Container failed with: Error"},
	}, {
		name: "an init container that completed",
		pods: []corev1.Pod{initDone},
	}, {
		name: "an init container that cannot pull",
		pods: []corev1.Pod{initPull},
		want: &podFailure{Reason: "ErrImagePull", Message: pullErr},
	}, {
		name: "two pods failing differently: the first by name",
		pods: []corev1.Pod{statusPod("b", crashLooping("user-container", 2, "Error", "b")), statusPod("a", crashLooping("user-container", 1, "Error", "a"))},
		want: &podFailure{Reason: "ExitCode1", Message: "Container failed with: a"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, podsFailure(tc.pods)); diff != "" {
				t.Errorf("podsFailure (-want +got):\n%s", diff)
			}
		})
	}
}

// How the pods' failure shows on the Revision's conditions, after the
// Deployment's and the PodAutoscaler's.
func TestMarkStatusPods(t *testing.T) {
	const (
		pullErr   = `failed to pull image "example.com/hello": not found`
		deploying = "waiting for 1 replica(s) of hello-00001-deployment to become ready"
	)
	dep := func(replicas, ready int32) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Name, d.Spec.Replicas, d.Status.ReadyReplicas = "hello-00001-deployment", ptr.To(replicas), ready
		return d
	}
	pa := &autoscalingv1alpha1.PodAutoscaler{}
	pullFailed := func(s *servingv1.RevisionStatus) { s.MarkContainerHealthyFalse("ErrImagePull", pullErr) }
	crashing := []corev1.Pod{statusPod("a", crashLooping("user-container", 5, "Error", "Crashed..."))}
	backOff := []corev1.Pod{statusPod("a", waiting("user-container", "ImagePullBackOff", `Back-off pulling image "example.com/hello"`))}
	unschedulable := statusPod("a")
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available"}}
	tests := []struct {
		name                 string
		before               func(*servingv1.RevisionStatus)
		dep                  *appsv1.Deployment
		pods                 []corev1.Pod
		resources, container cond
		ready                cond
	}{{
		name: "an image that cannot be pulled fails the Revision",
		dep:  dep(1, 0), pods: []corev1.Pod{statusPod("a", waiting("user-container", "ErrImagePull", pullErr))},
		resources: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		container: cond{corev1.ConditionFalse, "ErrImagePull", pullErr},
		ready:     cond{corev1.ConditionFalse, "ErrImagePull", pullErr},
	}, {
		name: "the back-off after a failed pull keeps the pull's error",
		dep:  dep(1, 0), pods: backOff, before: pullFailed,
		resources: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		container: cond{corev1.ConditionFalse, "ErrImagePull", pullErr},
		ready:     cond{corev1.ConditionFalse, "ErrImagePull", pullErr},
	}, {
		name: "the back-off seen first is reported as it is",
		dep:  dep(1, 0), pods: backOff,
		resources: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		container: cond{corev1.ConditionFalse, "ImagePullBackOff", `Back-off pulling image "example.com/hello"`},
		ready:     cond{corev1.ConditionFalse, "ImagePullBackOff", `Back-off pulling image "example.com/hello"`},
	}, {
		name: "a container that keeps exiting fails the Revision",
		dep:  dep(1, 0), pods: crashing,
		resources: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		container: cond{corev1.ConditionFalse, "ExitCode5", "Container failed with: Crashed..."},
		ready:     cond{corev1.ConditionFalse, "ExitCode5", "Container failed with: Crashed..."},
	}, {
		name: "no node takes the pod: the resources are unavailable",
		dep:  dep(1, 0), pods: []corev1.Pod{unschedulable},
		resources: cond{corev1.ConditionFalse, "Unschedulable", "0/1 nodes are available"},
		container: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		ready:     cond{corev1.ConditionFalse, "Unschedulable", "0/1 nodes are available"},
	}, {
		name: "pods starting leave the Revision deploying",
		dep:  dep(1, 0), pods: []corev1.Pod{statusPod("a", waiting("user-container", "ContainerCreating", ""))},
		resources: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		container: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		ready:     cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
	}, {
		name: "a failure clears once the pods run again, before they are ready",
		dep:  dep(1, 0), pods: []corev1.Pod{statusPod("a", running("user-container"))}, before: pullFailed,
		resources: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		container: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		ready:     cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
	}, {
		name: "the Deployment says why its replicas fail (the local runtime): its words, not the pods'",
		dep: func() *appsv1.Deployment {
			d := dep(1, 0)
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue,
				Reason: "CrashLoopBackOff", Message: "container user-container exited with code 5: Crashed... (restarted 3 times)"}}
			return d
		}(),
		pods:      crashing,
		resources: cond{Status: corev1.ConditionUnknown},
		container: cond{corev1.ConditionFalse, "CrashLoopBackOff", "container user-container exited with code 5: Crashed... (restarted 3 times)"},
		ready:     cond{corev1.ConditionFalse, "CrashLoopBackOff", "container user-container exited with code 5: Crashed... (restarted 3 times)"},
	}, {
		name: "scaled to zero after failing: the failure stands",
		dep:  dep(0, 0), before: pullFailed,
		resources: cond{Status: corev1.ConditionUnknown},
		container: cond{corev1.ConditionFalse, "ErrImagePull", pullErr},
		ready:     cond{corev1.ConditionFalse, "ErrImagePull", pullErr},
	}, {
		name: "scaled up again: deploying afresh",
		dep:  dep(1, 0), before: pullFailed,
		resources: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		container: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
		ready:     cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, deploying},
	}, {
		name: "a ready replica: a crashing pod beside it is not the Revision's failure",
		dep:  dep(2, 1), pods: crashing, before: pullFailed,
		resources: cond{Status: corev1.ConditionTrue}, container: cond{Status: corev1.ConditionTrue}, ready: cond{Status: corev1.ConditionTrue},
	}, {
		name: "scaled to zero after serving: no replica wanted, nothing read",
		dep:  dep(0, 0), pods: crashing, before: func(s *servingv1.RevisionStatus) { s.MarkContainerHealthyTrue() },
		resources: cond{Status: corev1.ConditionTrue}, container: cond{Status: corev1.ConditionTrue}, ready: cond{Status: corev1.ConditionTrue},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got := marked(tc.before, tc.dep, pa, tc.pods,
				servingv1.RevisionConditionResourcesAvailable, servingv1.RevisionConditionContainerHealthy, duckv1.ConditionReady)
			if diff := cmp.Diff([]cond{tc.resources, tc.container, tc.ready}, got); diff != "" {
				t.Errorf("ResourcesAvailable, ContainerHealthy, Ready (-want +got):\n%s", diff)
			}
		})
	}
}

// A pod wakes its Revision when its failure changes — a pull fails, a
// container starts crashing, a failing container recovers — and not when
// it fails again the same way (another restart, another back-off).
func TestWatchPodsWakesOnFailure(t *testing.T) {
	const pullErr = "not found"
	creating := pod("a")
	creating.Status.ContainerStatuses = []corev1.ContainerStatus{waiting("user-container", "ContainerCreating", "")}
	pullFailed := pod("a")
	pullFailed.Status.ContainerStatuses = []corev1.ContainerStatus{waiting("user-container", "ErrImagePull", pullErr)}
	backingOff := pod("a")
	backingOff.Status.ContainerStatuses = []corev1.ContainerStatus{waiting("user-container", "ImagePullBackOff", "Back-off")}
	crashing := pod("a")
	crashing.Status.ContainerStatuses = []corev1.ContainerStatus{crashLooping("user-container", 1, "Error", "panic")}
	crashedAgain := crashing.DeepCopy()
	crashedAgain.Status.ContainerStatuses[0].RestartCount++
	crashedAgain.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	recovered := pod("a")
	recovered.Status.ContainerStatuses = []corev1.ContainerStatus{running("user-container")}
	for _, tc := range []struct {
		name     string
		old, new *corev1.Pod
		want     bool
	}{
		{name: "a pull fails", old: creating, new: pullFailed, want: true},
		{name: "the pull backs off", old: pullFailed, new: backingOff, want: true},
		{name: "the container starts crashing", old: creating, new: crashing, want: true},
		{name: "it crashes again the same way", old: crashing, new: crashedAgain},
		{name: "it recovers", old: pullFailed, new: recovered, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podReportChanged.Update(event.TypedUpdateEvent[*corev1.Pod]{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("wakes = %v, want %v", got, tc.want)
			}
		})
	}
	if !podReportChanged.Create(event.TypedCreateEvent[*corev1.Pod]{Object: pullFailed}) || podReportChanged.Create(event.TypedCreateEvent[*corev1.Pod]{Object: creating}) {
		t.Error("want a pod created failing to wake its Revision, one created starting not")
	}
}

// The pod cache keeps of a pod what failureOf reads, and no more.
func TestSlimPodKeepsFailures(t *testing.T) {
	full := pod("a")
	full.Annotations = map[string]string{"a": "b"}
	full.DeletionTimestamp = &metav1.Time{}
	full.Spec.Containers = []corev1.Container{{Name: "user-container", Image: "example.com/hello"}}
	full.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "no node", LastTransitionTime: metav1.Now()},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse},
	}
	crash := crashLooping("user-container", 5, "Error", "Crashed...")
	crash.Image, crash.ImageID, crash.ContainerID = "example.com/hello", "example.com/hello@"+sha, "containerd://abc"
	crash.LastTerminationState.Terminated.FinishedAt = metav1.Now()
	full.Status.ContainerStatuses = []corev1.ContainerStatus{crash}
	full.Status.InitContainerStatuses = []corev1.ContainerStatus{exited("setup", 0, "Completed")}
	got, err := slimPod(full)
	if err != nil {
		t.Fatal(err)
	}
	want := pod("a")
	want.DeletionTimestamp = full.DeletionTimestamp
	want.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "no node"}}
	want.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "user-container", ImageID: "example.com/hello@" + sha,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=user-container"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 5, Reason: "Error", Message: "Crashed..."}}}}
	want.Status.InitContainerStatuses = []corev1.ContainerStatus{exited("setup", 0, "Completed")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("slimPod (-want +got):\n%s", diff)
	}
}

// The reconciler reads a Revision's pods on every pass while none of its
// replicas is ready: an image that cannot be pulled or a container that
// keeps exiting fails the Revision, once, with a Warning Event; pods that
// start, or a ready replica, clear it.
func TestReconcilePodFailures(t *testing.T) {
	const pullErr = `failed to pull image "example.com/hello": not found`
	type cond struct {
		Status          corev1.ConditionStatus
		Reason, Message string
	}
	deploying := cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, "waiting for 1 replica(s) of hello-00001-deployment to become ready"}
	g := newRig(t, interceptor.Funcs{}, testRevision(), deployment(), podAutoscaler(corev1.ConditionUnknown, corev1.ConditionUnknown), pod("a"))
	ctx := context.Background()
	for _, step := range []struct {
		name      string
		statuses  []corev1.ContainerStatus
		ready     int32
		container cond
		events    []string
	}{{
		name:      "the pod is being created",
		statuses:  []corev1.ContainerStatus{waiting("user-container", "ContainerCreating", ""), waiting("queue-proxy", "ContainerCreating", "")},
		container: deploying,
	}, {
		name:      "its image cannot be pulled",
		statuses:  []corev1.ContainerStatus{waiting("user-container", "ErrImagePull", pullErr), running("queue-proxy")},
		container: cond{corev1.ConditionFalse, "ErrImagePull", pullErr},
		events:    []string{"Warning RevisionFailed ErrImagePull: " + pullErr},
	}, {
		name:      "the kubelet backs off: the pull's error stays",
		statuses:  []corev1.ContainerStatus{waiting("user-container", "ImagePullBackOff", `Back-off pulling image "example.com/hello"`), running("queue-proxy")},
		container: cond{corev1.ConditionFalse, "ErrImagePull", pullErr},
	}, {
		name:      "pulled, the container runs",
		statuses:  []corev1.ContainerStatus{running("user-container"), running("queue-proxy")},
		container: deploying,
	}, {
		name:      "and keeps exiting",
		statuses:  []corev1.ContainerStatus{crashLooping("user-container", 5, "Error", "Crashed..."), running("queue-proxy")},
		container: cond{corev1.ConditionFalse, "ExitCode5", "Container failed with: Crashed..."},
		events:    []string{"Warning RevisionFailed ExitCode5: Container failed with: Crashed..."},
	}, {
		name:      "a replica turns ready: healthy, whatever the pod restarted from",
		statuses:  []corev1.ContainerStatus{crashLooping("user-container", 5, "Error", "Crashed..."), running("queue-proxy")},
		ready:     1,
		container: cond{Status: corev1.ConditionTrue},
		events:    []string{"Normal RevisionReady the Revision's replicas are ready and reachable"},
	}} {
		p := &corev1.Pod{}
		if err := g.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, p); err != nil {
			t.Fatal(err)
		}
		p.Status.ContainerStatuses = step.statuses
		if err := g.c.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
		d := &appsv1.Deployment{}
		if err := g.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello-00001-deployment"}, d); err != nil {
			t.Fatal(err)
		}
		d.Status.ReadyReplicas = step.ready
		if err := g.c.Status().Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		if _, err := g.r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		rev := &servingv1.Revision{}
		if err := g.c.Get(ctx, key, rev); err != nil {
			t.Fatal(err)
		}
		c := rev.Status.GetCondition(servingv1.RevisionConditionContainerHealthy)
		if diff := cmp.Diff(step.container, cond{c.Status, c.Reason, c.Message}); diff != "" {
			t.Errorf("%s: ContainerHealthy (-want +got):\n%s", step.name, diff)
		}
		if r := rev.Status.GetCondition(duckv1.ConditionReady); step.container.Status == corev1.ConditionFalse && (!r.IsFalse() || r.Reason != step.container.Reason || r.Message != step.container.Message) {
			t.Errorf("%s: Ready = %+v, want False with ContainerHealthy's reason and message", step.name, r)
		}
		if diff := cmp.Diff(step.events, g.events()); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", step.name, diff)
		}
	}
}
