package runtime

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPodStatus(t *testing.T) {
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	now := created.Add(time.Minute)
	spec := &corev1.PodSpec{Containers: []corev1.Container{
		{Name: "user-container", Image: "ko://example.com/hello"},
		{Name: "queue-proxy", Image: "knit://queue"},
	}}
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(created.Add(d)) }
	running := func(ready bool) containerState {
		return containerState{running: true, ready: ready, startedAt: created.Add(time.Second)}
	}
	crash := &corev1.ContainerStateTerminated{ExitCode: 3, Reason: reasonError, Message: "boom", StartedAt: at(time.Second), FinishedAt: at(2 * time.Second)}
	stopped := &corev1.ContainerStateTerminated{ExitCode: 0, Reason: reasonCompleted, StartedAt: at(3 * time.Second), FinishedAt: at(4 * time.Second)}
	conds := func(ready corev1.ConditionStatus, notReady string) []corev1.PodCondition {
		c := []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.ContainersReady, Status: ready},
			{Type: corev1.PodReady, Status: ready},
		}
		for i := range c {
			c[i].LastTransitionTime = metav1.NewTime(now)
		}
		if notReady != "" {
			for i := 2; i < 4; i++ {
				c[i].Reason, c[i].Message = "ContainersNotReady", "containers with unready status: ["+notReady+"]"
			}
		}
		return c
	}
	base := func(phase corev1.PodPhase, c []corev1.PodCondition, cs ...corev1.ContainerStatus) corev1.PodStatus {
		return corev1.PodStatus{
			Phase: phase, Conditions: c, StartTime: ptr.To(metav1.NewTime(created)),
			PodIP: "127.0.0.1", PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}}, HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}},
			ContainerStatuses: cs,
		}
	}
	user := func(s corev1.ContainerState, ready bool, restarts int32, last *corev1.ContainerStateTerminated) corev1.ContainerStatus {
		cs := corev1.ContainerStatus{Name: "user-container", Image: "ko://example.com/hello", State: s, Ready: ready, Started: ptr.To(s.Running != nil), RestartCount: restarts}
		cs.LastTerminationState.Terminated = last
		return cs
	}
	queue := func(s corev1.ContainerState, ready bool) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "queue-proxy", Image: "knit://queue", State: s, Ready: ready, Started: ptr.To(s.Running != nil)}
	}
	runningState := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(time.Second)}}
	creating := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reasonContainerCreating}}

	for _, tc := range []struct {
		name        string
		containers  []containerState
		terminating bool
		noNetwork   bool
		want        corev1.PodStatus
	}{
		{
			name:       "starting: Pending, containers being created",
			containers: []containerState{{}, {}},
			want:       base(corev1.PodPending, conds(corev1.ConditionFalse, "user-container queue-proxy"), user(creating, false, 0, nil), queue(creating, false)),
		},
		{
			name:       "running, one not ready yet",
			containers: []containerState{running(false), running(true)},
			want:       base(corev1.PodRunning, conds(corev1.ConditionFalse, "user-container"), user(runningState, false, 0, nil), queue(runningState, true)),
		},
		{
			name:       "ready",
			containers: []containerState{running(true), running(true)},
			want:       base(corev1.PodRunning, conds(corev1.ConditionTrue, ""), user(runningState, true, 0, nil), queue(runningState, true)),
		},
		{
			name: "build failed: waiting with the runtime's reason and message",
			containers: []containerState{
				{setup: &failure{Reason: ReasonBuildFailed, Message: "go build ko://example.com/hello: no Go files"}}, running(true),
			},
			want: base(corev1.PodPending, conds(corev1.ConditionFalse, "user-container"),
				user(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonBuildFailed, Message: "go build ko://example.com/hello: no Go files"}}, false, 0, nil),
				queue(runningState, true)),
		},
		{
			name: "crashed, backing off: CrashLoopBackOff as the Deployment says it, the exit in lastState",
			containers: []containerState{
				{restarts: 2, lastExit: "exited with code 3", lastLines: []string{"boom"}, exit: crash}, running(true),
			},
			want: base(corev1.PodRunning, conds(corev1.ConditionFalse, "user-container"),
				user(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason: ReasonCrashLoopBackOff, Message: "container user-container exited with code 3 (restarted 2 times): boom",
				}}, false, 2, crash),
				queue(runningState, true)),
		},
		{
			name: "restarted after a liveness kill: running, restartCount 1, lastState terminated",
			containers: []containerState{
				{running: true, ready: true, startedAt: created.Add(time.Second), restarts: 1, lastExit: "failed liveness probe", exit: crash}, running(true),
			},
			want: base(corev1.PodRunning, conds(corev1.ConditionTrue, ""), user(runningState, true, 1, crash), queue(runningState, true)),
		},
		{
			name:        "stopping: a container that ended is terminated, its earlier end in lastState",
			terminating: true,
			containers:  []containerState{{restarts: 1, lastExit: "exited with code 3", exit: stopped, prevExit: crash}, running(false)},
			want: base(corev1.PodRunning, conds(corev1.ConditionFalse, "user-container queue-proxy"),
				user(corev1.ContainerState{Terminated: stopped}, false, 1, crash), queue(runningState, false)),
		},
		{
			name:       "no network yet: no IPs",
			noNetwork:  true,
			containers: []containerState{{}, {}},
			want: func() corev1.PodStatus {
				s := base(corev1.PodPending, conds(corev1.ConditionFalse, "user-container queue-proxy"), user(creating, false, 0, nil), queue(creating, false))
				s.PodIP, s.PodIPs, s.HostIP, s.HostIPs = "", nil, "", nil
				return s
			}(),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.containers {
				tc.containers[i].name = spec.Containers[i].Name // as newReplica names them
			}
			snap := podSnapshot{created: created, ip: "127.0.0.1", hostIP: "127.0.0.1", terminating: tc.terminating, containers: tc.containers}
			if tc.noNetwork {
				snap.ip, snap.hostIP = "", ""
			}
			if diff := cmp.Diff(tc.want, podStatus(spec, snap, nil, now)); diff != "" {
				t.Errorf("podStatus (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodStatusKeepsTransitionTimes: a condition whose status holds keeps
// its time, so an unchanged replica computes the status last written and
// nothing is written again.
func TestPodStatusKeepsTransitionTimes(t *testing.T) {
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}
	snap := podSnapshot{created: created, ip: "127.0.0.1", hostIP: "127.0.0.1", containers: []containerState{{running: true, startedAt: created}}}
	first := podStatus(spec, snap, nil, created.Add(time.Second))
	if again := podStatus(spec, snap, &first, created.Add(time.Hour)); !cmp.Equal(first, again) {
		t.Errorf("unchanged replica, new status:\n%s", cmp.Diff(first, again))
	}
	snap.containers[0].ready = true
	readyAt := created.Add(2 * time.Hour)
	ready := podStatus(spec, snap, &first, readyAt)
	for _, c := range ready.Conditions {
		want := first.Conditions[0].LastTransitionTime
		if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			want = metav1.NewTime(readyAt)
		}
		if !c.LastTransitionTime.Equal(&want) {
			t.Errorf("%s changed at %s, want %s", c.Type, c.LastTransitionTime, want)
		}
	}
}

func TestMakePod(t *testing.T) {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hello-00001-deployment", UID: "dep-uid"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "hello"}, Annotations: map[string]string{"a": "b"}},
			Spec:       corev1.PodSpec{NodeName: "somewhere", Containers: []corev1.Container{{Name: "user-container", Image: "ko://example.com/hello"}}},
		}},
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "hello-00001-deployment-0123456789-abcde",
			Labels:      map[string]string{"app": "hello", "pod-template-hash": "0123456789"},
			Annotations: map[string]string{"a": "b"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "hello-00001-deployment", UID: "dep-uid",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		// The ServiceAccount admission plugin's default, which knit dev runs without.
		Spec: corev1.PodSpec{ServiceAccountName: "default", NodeName: "this-machine", Containers: []corev1.Container{{Name: "user-container", Image: "ko://example.com/hello"}}},
	}
	got := makePod(d, "hello-00001-deployment-0123456789-abcde", "0123456789", "this-machine")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("makePod (-want +got):\n%s", diff)
	}
	if d.Spec.Template.Labels["pod-template-hash"] != "" {
		t.Error("makePod changed the Deployment's template")
	}
	if !ownedByDeployment(got) {
		t.Error("ownedByDeployment(makePod(…)) = false")
	}
}
