package runtime

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestPodStatusWithInitContainers: a Pod whose init containers run, fail
// or have completed reads as the kubelet writes it — Pending and
// Initialized False (ContainersNotInitialized, naming those not
// completed) with its containers waiting PodInitializing until all have
// completed; a failed one waiting CrashLoopBackOff with its exit in
// lastState; a completed one terminated, Completed, and ready.
func TestPodStatusWithInitContainers(t *testing.T) {
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	now := created.Add(time.Minute)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(created.Add(d)) }
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "migrate", Image: "registry.example/migrate:1"}, {Name: "seed", Image: "ko://example.com/seed"}},
		Containers:     []corev1.Container{{Name: "user-container", Image: "ko://example.com/hello"}},
	}
	failed := &corev1.ContainerStateTerminated{ExitCode: 7, Reason: reasonError, Message: "no database", StartedAt: at(time.Second), FinishedAt: at(2 * time.Second)}
	done := &corev1.ContainerStateTerminated{ExitCode: 0, Reason: reasonCompleted, StartedAt: at(3 * time.Second), FinishedAt: at(4 * time.Second)}
	const digest = "registry.example/migrate@sha256:0123"
	initState := func(s containerState) containerState {
		s.init, s.imageID, s.containerID = true, digest, "runc://knit-abcde-migrate-1"
		return s
	}
	waitingFor := func(reason, msg string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	}
	initializing := waitingFor(reasonPodInitializing, "")
	status := func(c corev1.Container, s corev1.ContainerState, ready bool, restarts int32, last *corev1.ContainerStateTerminated) corev1.ContainerStatus {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: s, Ready: ready, Started: ptr.To(s.Running != nil), RestartCount: restarts}
		if c.Name == "migrate" {
			cs.ImageID, cs.ContainerID = digest, "runc://knit-abcde-migrate-1"
		}
		cs.LastTerminationState.Terminated = last
		return cs
	}
	migrate, seed, app := spec.InitContainers[0], spec.InitContainers[1], spec.Containers[0]
	notInitialized := func(names string) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionFalse, Reason: reasonContainersNotInitialized,
			Message: "containers with incomplete status: [" + names + "]"}
	}

	for _, tc := range []struct {
		name        string
		inits       []containerState
		app         containerState
		phase       corev1.PodPhase
		initialized corev1.PodCondition
		want        []corev1.ContainerStatus // init containers', then the app's
	}{
		{
			name:        "the first runs: the rest wait PodInitializing",
			inits:       []containerState{initState(containerState{running: true, startedAt: created.Add(time.Second)}), {init: true}},
			phase:       corev1.PodPending,
			initialized: notInitialized("migrate seed"),
			want: []corev1.ContainerStatus{
				status(migrate, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(time.Second)}}, false, 0, nil),
				status(seed, initializing, false, 0, nil),
				status(app, initializing, false, 0, nil),
			},
		},
		{
			name: "the first failed: CrashLoopBackOff, its exit in lastState",
			inits: []containerState{
				initState(containerState{restarts: 2, lastExit: "exited with code 7", lastLines: []string{"no database"}, exit: failed}), {init: true},
			},
			phase:       corev1.PodPending,
			initialized: notInitialized("migrate seed"),
			want: []corev1.ContainerStatus{
				status(migrate, waitingFor(ReasonCrashLoopBackOff, "init container migrate exited with code 7 (restarted 2 times): no database"), false, 2, failed),
				status(seed, initializing, false, 0, nil),
				status(app, initializing, false, 0, nil),
			},
		},
		{
			name: "the first completed after a failure: terminated Completed and ready, the failure in lastState",
			inits: []containerState{
				initState(containerState{restarts: 1, lastExit: "exited with code 7", completed: true, ready: true, exit: done, prevExit: failed}), {init: true},
			},
			phase:       corev1.PodPending,
			initialized: notInitialized("seed"),
			want: []corev1.ContainerStatus{
				status(migrate, corev1.ContainerState{Terminated: done}, true, 1, failed),
				status(seed, initializing, false, 0, nil),
				status(app, initializing, false, 0, nil),
			},
		},
		{
			name: "all completed, the app runs: Running and Initialized",
			inits: []containerState{
				initState(containerState{completed: true, ready: true, exit: done}), {init: true, completed: true, ready: true, exit: done},
			},
			app:         containerState{running: true, ready: true, startedAt: created.Add(5 * time.Second)},
			phase:       corev1.PodRunning,
			initialized: corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			want: []corev1.ContainerStatus{
				status(migrate, corev1.ContainerState{Terminated: done}, true, 0, nil),
				status(seed, corev1.ContainerState{Terminated: done}, true, 0, nil),
				status(app, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(5 * time.Second)}}, true, 0, nil),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.inits {
				tc.inits[i].name = spec.InitContainers[i].Name
			}
			tc.app.name = app.Name
			snap := podSnapshot{created: created, ip: "127.0.0.1", hostIP: "127.0.0.1", inits: tc.inits, containers: []containerState{tc.app}}
			got := podStatus(spec, snap, nil, now)
			if got.Phase != tc.phase {
				t.Errorf("phase %s, want %s", got.Phase, tc.phase)
			}
			initialized := podConditionIn(got.Conditions, corev1.PodInitialized)
			initialized.LastTransitionTime = metav1.Time{}
			if diff := cmp.Diff(tc.initialized, initialized); diff != "" {
				t.Errorf("Initialized (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, append(got.InitContainerStatuses, got.ContainerStatuses...)); diff != "" {
				t.Errorf("initContainerStatuses and containerStatuses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompletedInitContainerIsNoFailure: an init container that failed
// and then completed no longer holds its replica's failure, as a
// container does for crashVisibleFor after a crash.
func TestCompletedInitContainerIsNoFailure(t *testing.T) {
	now := time.Now()
	failing := containerState{name: "migrate", init: true, restarts: 1, lastExit: "exited with code 7"}
	if f := failing.failure(now); f == nil || f.Reason != ReasonCrashLoopBackOff || f.Message != "init container migrate exited with code 7 (restarted 1 times)" {
		t.Errorf("failing init container: failure %+v, want CrashLoopBackOff naming the init container", f)
	}
	rerun := failing
	rerun.running, rerun.startedAt = true, now.Add(-time.Hour)
	if f := rerun.failure(now); f == nil || f.Reason != ReasonCrashLoopBackOff {
		t.Errorf("init container running again after a failure: failure %+v, want CrashLoopBackOff until it completes", f)
	}
	done := failing
	done.complete(&corev1.ContainerStateTerminated{Reason: reasonCompleted})
	if f := done.failure(now); f != nil {
		t.Errorf("completed init container: failure %+v, want none", f)
	}
}

func podConditionIn(conds []corev1.PodCondition, typ corev1.PodConditionType) corev1.PodCondition {
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	return corev1.PodCondition{}
}
