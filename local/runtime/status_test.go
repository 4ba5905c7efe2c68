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

var (
	now        = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	crashing   = &failure{Reason: ReasonCrashLoopBackOff, Message: "container user-container exited with code 1 (restarted 3 times): boom"}
	probing    = &failure{Reason: ReasonReadinessProbeFailed, Message: "container queue-proxy readiness probe failed: connection refused"}
	refusedPod = &failure{Reason: ReasonFailedCreate, Message: `pods "hello-00001-deployment-h1-abcde" is forbidden: exceeded quota: compute`}
	noBuild    = &failure{Reason: ReasonBuildFailed, Message: "go build ko://example.com/app: main.go:3:2: undefined: x"}
)

func deployment(replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hello-00001-deployment", Generation: 4},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas), ProgressDeadlineSeconds: ptr.To[int32](120)},
	}
}

func readyReplica(hash string) replicaView {
	return replicaView{Hash: hash, Ready: true, ReadySince: now.Add(-time.Minute)}
}

func cond(typ appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, msg string) appsv1.DeploymentCondition {
	t := metav1.NewTime(now)
	return appsv1.DeploymentCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastUpdateTime: t, LastTransitionTime: t}
}

var (
	availableCond   = cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, ReasonMinimumReplicasAvailable, "Deployment has minimum availability.")
	unavailableCond = cond(appsv1.DeploymentAvailable, corev1.ConditionFalse, ReasonMinimumReplicasUnavailable, "Deployment does not have minimum availability.")
	progressed      = cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewReplicaSetAvailable, `Deployment "hello-00001-deployment" has successfully progressed.`)
	progressing     = cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonReplicaSetUpdated, `Deployment "hello-00001-deployment" is progressing.`)
	failedRollup    = func(f *failure) appsv1.DeploymentCondition {
		return cond(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue, f.Reason, f.Message)
	}
)

func TestMakeStatus(t *testing.T) {
	for _, tc := range []struct {
		name     string
		d        *appsv1.Deployment
		replicas []replicaView
		since    time.Time
		refusal  *failure
		want     appsv1.DeploymentStatus
		wantWake time.Duration
	}{{
		name:     "all ready",
		d:        deployment(2),
		replicas: []replicaView{readyReplica("h1"), readyReplica("h1")},
		since:    now.Add(-time.Minute),
		want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{availableCond, progressed}},
	}, {
		name:     "one crashing",
		d:        deployment(2),
		replicas: []replicaView{readyReplica("h1"), {Hash: "h1", Failure: crashing}},
		since:    now.Add(-time.Minute),
		want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{unavailableCond, progressing, failedRollup(crashing)}},
		wantWake: time.Minute, // the rest of the 120s deadline
	}, {
		name:     "past the progress deadline",
		d:        deployment(1),
		replicas: []replicaView{{Hash: "h1", Failure: crashing}},
		since:    now.Add(-121 * time.Second),
		want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{unavailableCond,
				cond(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceeded,
					`Deployment "hello-00001-deployment" did not become available within 2m0s: `+crashing.Message),
				failedRollup(crashing)}},
	}, {
		name:     "the worst failure is reported",
		d:        deployment(3),
		replicas: []replicaView{{Hash: "h1", Failure: probing}, {Hash: "h1", Failure: noBuild}, {Hash: "h1", Failure: crashing}},
		since:    now,
		want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 3, UpdatedReplicas: 3, UnavailableReplicas: 3,
			Conditions: []appsv1.DeploymentCondition{unavailableCond, progressing, failedRollup(noBuild)}},
		wantWake: 120 * time.Second,
	}, {
		name:     "its Pods refused: FailedCreate before what the replicas say",
		d:        deployment(1),
		replicas: []replicaView{{Hash: "h1", Failure: crashing}},
		since:    now,
		refusal:  refusedPod,
		want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{unavailableCond, progressing, failedRollup(refusedPod)}},
		wantWake: 120 * time.Second,
	}, {
		name:     "scaled to zero, last replica terminating",
		d:        deployment(0),
		replicas: []replicaView{{Hash: "h1", Ready: true, Terminating: true}},
		since:    now,
		want: appsv1.DeploymentStatus{ObservedGeneration: 4,
			Conditions: []appsv1.DeploymentCondition{availableCond, progressed}},
	}, {
		name:     "rolling: the old replica serves while the new one starts; its failure is history",
		d:        deployment(1),
		replicas: []replicaView{{Hash: "old", Ready: true, ReadySince: now.Add(-time.Hour), Failure: crashing}, {Hash: "h1"}},
		since:    now,
		want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{availableCond, progressing}},
		wantWake: 120 * time.Second,
	}, {
		name: "minReadySeconds not yet passed",
		d: func() *appsv1.Deployment {
			d := deployment(1)
			d.Spec.MinReadySeconds = 5
			d.Spec.ProgressDeadlineSeconds = ptr.To[int32](1<<31 - 1) // none
			return d
		}(),
		replicas: []replicaView{{Hash: "h1", Ready: true, ReadySince: now.Add(-2 * time.Second)}},
		since:    now,
		want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, UnavailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{unavailableCond, progressing}},
		wantWake: 3 * time.Second,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, wake := makeStatus(tc.d, tc.replicas, "h1", tc.since, tc.refusal, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if wake != tc.wantWake {
				t.Errorf("wake = %s, want %s", wake, tc.wantWake)
			}
		})
	}
}

func TestStampConditionsKeepsTimes(t *testing.T) {
	earlier := metav1.NewTime(now.Add(-time.Hour))
	old := []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: ReasonMinimumReplicasAvailable, Message: availableCond.Message, LastUpdateTime: earlier, LastTransitionTime: earlier},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: ReasonReplicaSetUpdated, Message: progressing.Message, LastUpdateTime: earlier, LastTransitionTime: earlier},
		{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: ReasonCrashLoopBackOff, LastUpdateTime: earlier, LastTransitionTime: earlier},
	}
	got := stampConditions(old, []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: ReasonMinimumReplicasAvailable, Message: availableCond.Message},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: ReasonNewReplicaSetAvailable, Message: progressed.Message},
	}, now)
	want := []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: ReasonMinimumReplicasAvailable, Message: availableCond.Message, LastUpdateTime: earlier, LastTransitionTime: earlier},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: ReasonNewReplicaSetAvailable, Message: progressed.Message, LastUpdateTime: metav1.NewTime(now), LastTransitionTime: earlier},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}

func TestProgressClock(t *testing.T) {
	var p progressClock
	steps := []struct {
		generation int64
		ready      int32
		at         time.Duration
		want       time.Duration
	}{
		{1, 0, 0, 0},
		{1, 0, 10 * time.Second, 0},                 // nothing happened
		{1, 1, 20 * time.Second, 20 * time.Second},  // one more ready
		{1, 0, 30 * time.Second, 20 * time.Second},  // fewer is no progress
		{2, 0, 40 * time.Second, 40 * time.Second},  // a new spec starts over
		{2, 0, 900 * time.Second, 40 * time.Second}, // and the deadline runs from there
	}
	for _, s := range steps {
		if got := p.observe(s.generation, s.ready, now.Add(s.at)); !got.Equal(now.Add(s.want)) {
			t.Errorf("at %s: progress since %s, want %s", s.at, got.Sub(now), s.want)
		}
	}
}

func TestContainerFailure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state containerState
		want  *failure
	}{
		{"running and ready", containerState{name: "c", running: true, ready: true, startedAt: now.Add(-time.Hour)}, nil},
		{"cannot be set up", containerState{name: "c", setup: noBuild}, noBuild},
		{"waiting after a crash", containerState{name: "user-container", restarts: 3, lastExit: "exited with code 1", lastLines: []string{"loading config", "boom"}},
			&failure{Reason: ReasonCrashLoopBackOff, Message: "container user-container exited with code 1 (restarted 3 times): loading config\nboom"}},
		{"restarted moments ago", containerState{name: "c", running: true, ready: true, startedAt: now.Add(-time.Second), lastExit: "was killed by signal killed"},
			&failure{Reason: ReasonCrashLoopBackOff, Message: "container c was killed by signal killed (restarted 0 times)"}},
		{"restarted and healthy since", containerState{name: "c", running: true, ready: true, startedAt: now.Add(-crashVisibleFor), lastExit: "exited with code 1"}, nil},
		{"probe failing", containerState{name: "c", running: true, startedAt: now.Add(-time.Hour), probe: probing.Message}, probing},
		{"probe not yet failing long enough", containerState{name: "c", running: true, startedAt: now}, nil},
		{"running again, its probe failing", containerState{name: "c", running: true, startedAt: now.Add(-crashVisibleFor), lastExit: "exited with code 0", restarts: 4, probe: probing.Message}, probing},
		{"running again, probe failing within the crash window", containerState{name: "c", running: true, startedAt: now.Add(-time.Second), lastExit: "exited with code 0", restarts: 4, probe: probing.Message},
			&failure{Reason: ReasonCrashLoopBackOff, Message: "container c exited with code 0 (restarted 4 times)"}},
		{"running again, not ready, no probe word yet", containerState{name: "c", running: true, startedAt: now.Add(-time.Hour), lastExit: "exited with code 1", restarts: 2},
			&failure{Reason: ReasonCrashLoopBackOff, Message: "container c exited with code 1 (restarted 2 times)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.state.failure(now)); diff != "" {
				t.Errorf("failure (-want +got):\n%s", diff)
			}
		})
	}
}

// A Deployment whose Pods are refused waits 1 s, then twice as long
// after each refusal in a row, up to 30 s.
func TestRefusalBackoff(t *testing.T) {
	var st deploymentState
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		st.refused(refusedPod, now)
		if got := st.retryAt.Sub(now); got != want {
			t.Errorf("refusal %d: retry after %s, want %s", i+1, got, want)
		}
	}
	if st.refusal != refusedPod {
		t.Errorf("refusal = %v", st.refusal)
	}
}
