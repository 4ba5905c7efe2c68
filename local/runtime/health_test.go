//go:build !unit

package runtime

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// readyProgram serves on $PORT; `ready probe` passes while $READY_FILE
// exists, as Knative's readiness test image passes while its app says it
// is healthy; `ready idle` waits for SIGTERM.
const readyProgram = `package main

import (
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	switch mode := append(os.Args[1:], "")[0]; mode {
	case "probe":
		if _, err := os.Stat(os.Getenv("READY_FILE")); err != nil {
			os.Stdout.WriteString("not healthy\n")
			os.Exit(1)
		}
	case "idle":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		<-c
	default:
		http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil)
	}
}
`

// TestExecReadinessOfEveryContainer: the exec readiness probes Knative
// leaves on the containers — written for the image ko builds, so running
// /ko-app/ready — gate the replica: it is ready only once every
// container's probe passes. The sidecar's command is /ko-app/ready too.
func TestExecReadinessOfEveryContainer(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	src, flags := t.TempDir(), sharedTempDir(t)
	writeFiles(t, src, map[string]string{"go.mod": "module example.com/probed\n\ngo 1.22\n", "cmd/ready/main.go": readyProgram})
	execProbe := &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/ko-app/ready", "probe"}}},
		PeriodSeconds: 1, FailureThreshold: 1,
	}
	app := corev1.Container{
		Name: "user-container", Image: "ko://./cmd/ready", Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		Env:            []corev1.EnvVar{{Name: "PORT", Value: "8080"}, {Name: "READY_FILE", Value: filepath.Join(flags, "app")}},
		ReadinessProbe: execProbe,
	}
	sidecar := corev1.Container{
		Name: "sidecar", Image: "ko://./cmd/ready", Command: []string{"/ko-app/ready", "idle"},
		Env:            []corev1.EnvVar{{Name: "READY_FILE", Value: filepath.Join(flags, "sidecar")}},
		ReadinessProbe: execProbe,
	}
	d := revisionDeployment(ns, "probed", 1, app, sidecar)
	d.Spec.Template.Annotations = map[string]string{sourceDirAnnotation: src}
	create(t, d)
	key := client.ObjectKeyFromObject(d)

	failingIn := func(container string) func(*appsv1.Deployment) bool {
		want := regexp.MustCompile(`^container ` + container + ` readiness probe failed: exit status 1: not healthy$`)
		return func(d *appsv1.Deployment) bool {
			c := condition(d, appsv1.DeploymentReplicaFailure)
			return failingWith(ReasonReadinessProbeFailed)(d) && want.MatchString(c.Message) && d.Status.Replicas == 1
		}
	}
	// A cold build compiles the standard library with -trimpath: minutes on a small machine.
	waitForDeployment(t, key, 5*time.Minute, "both probes failing", failingIn("user-container"))
	touch(t, filepath.Join(flags, "app"))
	got := waitForDeployment(t, key, 30*time.Second, "only the sidecar's probe failing", failingIn("sidecar"))
	if got.Status.ReadyReplicas != 0 {
		t.Errorf("readyReplicas = %d while the sidecar's probe fails, want 0", got.Status.ReadyReplicas)
	}
	touch(t, filepath.Join(flags, "sidecar"))
	waitForDeployment(t, key, 30*time.Second, "available once both pass", func(d *appsv1.Deployment) bool {
		return available(d) && condition(d, appsv1.DeploymentReplicaFailure) == nil
	})
}

// livenessApp is an app whose exec liveness probe (every second, two
// failures) fails once the file unhealthy exists: a test touches it to
// make the app unhealthy. It is knit's own (knit://), which sees this
// machine's files; an image's would not see the test's.
func livenessApp(t *testing.T) (c corev1.Container, unhealthy string) {
	unhealthy = filepath.Join(sharedTempDir(t), "unhealthy")
	c = appContainer("knit://serve")
	c.LivenessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", `test ! -e "$0" || { echo not healthy; exit 1; }`, unhealthy}}},
		PeriodSeconds: 1, FailureThreshold: 2,
	}
	return c, unhealthy
}

// TestLivenessProbeRestartsTheContainer: a container whose liveness probe
// fails failureThreshold times in a row is killed and restarted, its
// restart counted and the probe's failure reported; once it passes again
// the replica serves again.
func TestLivenessProbeRestartsTheContainer(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	c, unhealthy := livenessApp(t)
	d := revisionDeployment(ns, "liveness", 1, c)
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	waitForDeployment(t, key, 30*time.Second, "available", available)
	before := replicaPIDs(key)

	touch(t, unhealthy)
	want := regexp.MustCompile(`^container user-container failed liveness probe and was restarted \(Liveness probe failed: exit status 1: not healthy\) \(restarted [01] times\)`)
	got := waitForDeployment(t, key, 30*time.Second, "the liveness failure reported", func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentReplicaFailure)
		return failingWith(ReasonCrashLoopBackOff)(d) && want.MatchString(c.Message)
	})
	t.Logf("reported: %s", condition(got, appsv1.DeploymentReplicaFailure).Message)

	if err := os.Remove(unhealthy); err != nil {
		t.Fatal(err)
	}
	waitForDeployment(t, key, 30*time.Second, "restarted once and available again", func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentReplicaFailure)
		return available(d) && c != nil && regexp.MustCompile(`\(restarted 1 times\)`).MatchString(c.Message)
	})
	after := replicaPIDs(key)
	if len(before) != 1 || len(after) != 1 || before[0] == after[0] {
		t.Errorf("pids %v then %v, want one process replaced by another", before, after)
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
