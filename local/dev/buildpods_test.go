package dev

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/local/podlogs"
)

const testKey = "0123456789abcdef0123456789abcdef"

func testBuildPods(t *testing.T, objs ...client.Object) (*buildPods, client.Client, string) {
	t.Helper()
	c := fake.NewClientBuilder().WithStatusSubresource(&corev1.Pod{}).WithObjects(objs...).Build()
	dir := t.TempDir()
	logFile := func(key string) string { return filepath.Join(dir, key[:16]+".log") }
	return newBuildPods(c, "this-machine", logFile, logr.Discard()), c, dir
}

func buildPodOf(t *testing.T, c client.Client) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: config.SystemNamespace, Name: build.JobName(testKey)}, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// TestBuildPodFollowsTheBuild: a build is a mirror pod on knit dev's node,
// named as a cluster's build Job, Running while it builds and Succeeded
// or Failed after; its log is the build's log file, followable while the
// build runs.
func TestBuildPodFollowsTheBuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want corev1.PodPhase
	}{
		{"succeeded", nil, corev1.PodSucceeded},
		{"failed", errors.New("RUN make: exit code 2"), corev1.PodFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p, c, dir := testBuildPods(t)
			r := build.Request{Namespace: "team", Repository: "app", Image: "dockerfile://./web", Commit: "abc1234"}
			began := time.Now()
			p.started(ctx, testKey, r)
			pod := buildPodOf(t, c)
			if pod.Annotations[mirrorAnnotation] == "" || pod.Spec.NodeName != "this-machine" || pod.Status.Phase != corev1.PodRunning ||
				len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Name != "build" {
				t.Fatalf("while building: %+v", pod)
			}
			l, err := p.ContainerLog(config.SystemNamespace, pod.Name, "build", false)
			if err != nil || l.Path != filepath.Join(dir, testKey[:16]+".log") || l.Live == nil {
				t.Fatalf("log while building = %+v, %v; want the build's file, live", l, err)
			}

			p.finished(ctx, testKey, r, began, tc.err)
			pod = buildPodOf(t, c)
			if pod.Status.Phase != tc.want || pod.Status.ContainerStatuses[0].State.Terminated == nil {
				t.Errorf("after the build: phase %s, %+v; want %s", pod.Status.Phase, pod.Status.ContainerStatuses, tc.want)
			}
			select {
			case <-l.Live:
			default:
				t.Error("a follower of the build's log still waits after the build ended")
			}
		})
	}
}

func TestBuildPodLogs(t *testing.T) {
	p, _, dir := testBuildPods(t)
	if err := os.WriteFile(filepath.Join(dir, testKey[:16]+".log"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := build.JobName(testKey)
	for _, tc := range []struct {
		name, ns, pod, container string
		previous                 bool
		want                     int
	}{
		{"a finished build", config.SystemNamespace, name, "build", false, 0},
		{"another container", config.SystemNamespace, name, "main", false, http.StatusNotFound},
		{"previous", config.SystemNamespace, name, "build", true, http.StatusBadRequest},
		{"a build whose log is gone", config.SystemNamespace, build.JobName("fedcba9876543210fedcba"), "build", false, http.StatusNotFound},
		{"not a build's name", config.SystemNamespace, "knit-build-short", "build", false, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.ContainerLog(tc.ns, tc.pod, tc.container, tc.previous)
			var e *podlogs.Error
			switch {
			case tc.want == 0 && err != nil:
				t.Errorf("ContainerLog = %v, want the log", err)
			case tc.want != 0 && (!errors.As(err, &e) || e.Code != tc.want):
				t.Errorf("ContainerLog = %v, want a %d", err, tc.want)
			}
		})
	}
}

// TestBuildPodsCollected: finished build pods go after build.DefaultTTL,
// or beyond the newest keptBuildPods; a Running one no build of this knit
// dev runs goes at once; pods that are not mirror pods stay.
func TestBuildPodsCollected(t *testing.T) {
	now := time.Now()
	finished := func(name string, ago time.Duration) *corev1.Pod {
		pod := mirror(name, corev1.PodSucceeded)
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "build", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(now.Add(-ago))}}}}
		return pod
	}
	objs := []client.Object{
		finished("knit-build-recent", time.Minute),
		finished("knit-build-old", 2*time.Hour),
		mirror("knit-build-orphan", corev1.PodRunning),
		mirror("knit-build-running", corev1.PodRunning),
	}
	for i := range keptBuildPods {
		objs = append(objs, finished("knit-build-newer-"+string(rune('a'+i)), time.Duration(i)*time.Second))
	}
	notMirror := mirror("knit-build-job-pod", corev1.PodSucceeded)
	delete(notMirror.Annotations, mirrorAnnotation)
	objs = append(objs, notMirror)
	p, c, _ := testBuildPods(t, objs...)
	p.live["knit-build-running"] = make(chan struct{})
	p.collect(context.Background())

	var list corev1.PodList
	if err := c.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, pod := range list.Items {
		left = append(left, pod.Name)
	}
	for _, gone := range []string{"knit-build-old", "knit-build-orphan", "knit-build-recent"} {
		if slices.Contains(left, gone) {
			t.Errorf("%s kept", gone)
		}
	}
	for _, kept := range []string{"knit-build-running", "knit-build-job-pod", "knit-build-newer-a"} {
		if !slices.Contains(left, kept) {
			t.Errorf("%s collected", kept)
		}
	}
}

func mirror(name string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: name,
			Labels: map[string]string{build.BuildLabel: "x"}, Annotations: map[string]string{mirrorAnnotation: "x"}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

// TestBuildLogsSaysKubectlLogs: the BuildStarted Event tells how to read
// the build's log: kubectl logs of its pod with knit dev's own API server,
// the file with another.
func TestBuildLogsSaysKubectlLogs(t *testing.T) {
	b := &dockerfileBuilds{logDir: "/state/buildkit/logs"}
	st := knitv1alpha1.BuildStatus{Key: testKey}
	if got, want := b.Logs(st), "log in /state/buildkit/logs/0123456789abcdef.log"; got != want {
		t.Errorf("without mirror pods: %q, want %q", got, want)
	}
	b.pods, _, _ = testBuildPods(t)
	if got, want := b.Logs(st), "kubectl logs -n knit-system pod/knit-build-0123456789abcdef"; got != want {
		t.Errorf("with mirror pods: %q, want %q", got, want)
	}
}
