//go:build !unit

package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// dataVolume is an emptyDir "data" mounted at /data, which a replica's
// init containers and app share.
var dataVolume = corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}

func mountData(c corev1.Container) corev1.Container {
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: "/data"})
	return c
}

// TestInitContainersRunInOrderBeforeTheApp follows Knative's init
// container test, an init container writing into an emptyDir what the
// app then serves: two init containers — one of an image, run by runc,
// one of a ko:// image, run as a process of this machine — each append
// their name to /data/order, the first after a pause, so a second one
// started before the first completed would write first. The app appends
// its own and crashes on its first run: its restart does not run the
// init containers again. The Pod reports them completed, with the
// image's digest for the image's. A replica added by a scale-up runs
// them in its own sandbox.
func TestInitContainersRunInOrderBeforeTheApp(t *testing.T) {
	startSuite(t)
	image := suiteImage(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	// The image's runs as root, the ko:// one as ko's nonroot user: the
	// file is made for both.
	first := mountData(corev1.Container{Name: "first", Image: image, Command: []string{"/bin/sh", "-c", "sleep 1; echo first >> /data/order; chmod 666 /data/order"}})
	second := mountData(corev1.Container{Name: "second", Image: "ko://./testdata/httpserver", Command: []string{"/bin/sh", "-c", "echo second >> /data/order"}})
	app := mountData(appContainer(image, "/bin/sh", "-c",
		"echo app >> /data/order; if [ ! -e /data/crashed ]; then touch /data/crashed; exit 3; fi; exec /app/httpserver"))
	d := revisionDeployment(ns, "inits", 1, app)
	d.Spec.Template.Spec.InitContainers = []corev1.Container{first, second}
	d.Spec.Template.Spec.Volumes = []corev1.Volume{dataVolume}
	create(t, d)
	create(t, service(ns, "inits", map[string]string{"app": "inits"}, intstr.FromString("http")))
	key := client.ObjectKeyFromObject(d)
	waitForDeployment(t, key, 2*time.Minute, "available", available)

	const want = "first\nsecond\napp\napp\n" // each init container once, in order, then the app's two runs
	port := *readySlices(t, ns, "inits", 1)[0].Ports[0].Port
	if status, order, _ := fileAt(t, http.MethodGet, port, "/data/order", ""); status != http.StatusOK || order != want {
		t.Errorf("/data/order = %d %q, want %q", status, order, want)
	}

	pod := onlyPod(t, ns, "inits")
	checkCompletedInits(t, pod, "first", "second")
	if ics := pod.Status.InitContainerStatuses; len(ics) == 2 {
		if id := ics[0].ImageID; !strings.Contains(id, "/test/app@sha256:") || !strings.HasPrefix(ics[0].ContainerID, "runc://") {
			t.Errorf("init container first: imageID %q containerID %q, want the image's digest and a runc:// ID", id, ics[0].ContainerID)
		}
		if ics[1].ImageID != "" {
			t.Errorf("init container second: imageID %q, want none for a ko:// image", ics[1].ImageID)
		}
	}
	if cs := pod.Status.ContainerStatuses; len(cs) != 1 || cs[0].RestartCount < 1 || cs[0].State.Running == nil {
		t.Errorf("containerStatuses %+v, want the app running after its crash", cs)
	}

	scaled := &appsv1.Deployment{}
	if err := suite.client.Get(ctx, key, scaled); err != nil {
		t.Fatal(err)
	}
	scaled.Spec.Replicas = ptr.To[int32](2)
	if err := suite.client.Update(ctx, scaled); err != nil {
		t.Fatal(err)
	}
	waitForDeployment(t, key, 2*time.Minute, "2 available", func(d *appsv1.Deployment) bool {
		return available(d) && d.Status.ReadyReplicas == 2
	})
	for _, s := range readySlices(t, ns, "inits", 2) {
		p := *s.Ports[0].Port
		if status, order, _ := fileAt(t, http.MethodGet, p, "/data/order", ""); status != http.StatusOK || order != want {
			t.Errorf("replica %s: /data/order = %d %q, want %q", s.Name, status, order, want)
		}
	}
}

// checkCompletedInits checks that pod reports its init containers, named
// names in order, completed as the kubelet reports them, and itself
// initialized.
func checkCompletedInits(t *testing.T, pod corev1.Pod, names ...string) {
	t.Helper()
	ics := pod.Status.InitContainerStatuses
	if len(ics) != len(names) {
		t.Fatalf("initContainerStatuses %+v, want %v", ics, names)
	}
	for i, cs := range ics {
		done := cs.State.Terminated
		if cs.Name != names[i] || !cs.Ready || cs.RestartCount != 0 || done == nil || done.ExitCode != 0 || done.Reason != "Completed" {
			t.Errorf("initContainerStatuses[%d] = %+v, want %s ready, terminated Completed with exit code 0", i, cs, names[i])
		}
	}
	if got := podCondition(&pod, corev1.PodInitialized); got != corev1.ConditionTrue {
		t.Errorf("condition Initialized = %q, want True", got)
	}
	app := pod.Status.ContainerStatuses
	last := ics[len(ics)-1].State.Terminated
	if len(app) > 0 && app[0].State.Running != nil && last != nil && app[0].State.Running.StartedAt.Before(&last.FinishedAt) {
		t.Errorf("the app started at %s, before init container %s finished at %s", app[0].State.Running.StartedAt, names[len(names)-1], last.FinishedAt)
	}
}

// TestFailingInitContainerHoldsTheReplicaBack: an init container that
// exits 7 is run again with back-off, CrashLoopBackOff, and neither the
// app nor its sidecar ever starts. The Pod reads as the kubelet writes
// it: Pending, Initialized False, the init container's exit code and
// output in lastState, its restart count growing, its image's digest;
// the containers waiting PodInitializing. The Deployment names the init
// container.
func TestFailingInitContainerHoldsTheReplicaBack(t *testing.T) {
	startSuite(t)
	needImages(t)
	t.Parallel()
	ns := newNamespace(t)
	host, ref, digest := privateImage(t, ns, "init", v1.Config{Entrypoint: []string{"/app/httpserver"}, Env: []string{"PATH=/bin"}})
	migrate := corev1.Container{
		Name: "migrate", Image: ref, Command: []string{"/bin/sh", "-c", "echo 'migration failed: no database' >&2; exit 7"},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	sidecar := appContainer(ref, "/app/httpserver")
	sidecar.Name, sidecar.Ports, sidecar.ReadinessProbe = "sidecar", nil, nil
	sidecar.Env = []corev1.EnvVar{{Name: "PORT", Value: "8081"}}
	d := revisionDeployment(ns, "blocked", 1, appContainer(ref, "/app/httpserver"), sidecar)
	d.Spec.Template.Spec.InitContainers = []corev1.Container{migrate}
	d.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	create(t, d)

	var restarts int32
	var appRan string
	watch := func(what string, done func(corev1.ContainerStatus) bool) corev1.Pod {
		t.Helper()
		return waitForPods(t, ns, time.Minute, what, func(pods []corev1.Pod) bool {
			if len(pods) != 1 || len(pods[0].Status.InitContainerStatuses) != 1 {
				return false
			}
			for _, cs := range pods[0].Status.ContainerStatuses {
				if cs.State.Waiting == nil || cs.RestartCount != 0 || ptr.Deref(cs.Started, false) {
					appRan = fmt.Sprintf("%+v", cs)
				}
			}
			return done(pods[0].Status.InitContainerStatuses[0])
		})[0]
	}
	watch("migrate backing off after its first failure", func(cs corev1.ContainerStatus) bool {
		restarts = cs.RestartCount
		return cs.State.Waiting != nil && cs.State.Waiting.Reason == ReasonCrashLoopBackOff && cs.LastTerminationState.Terminated != nil
	})
	pod := watch("migrate restarted again", func(cs corev1.ContainerStatus) bool {
		return cs.RestartCount > restarts && cs.State.Waiting != nil && cs.State.Waiting.Reason == ReasonCrashLoopBackOff
	})
	if appRan != "" {
		t.Errorf("a container started while its init container failed: %s", appRan)
	}

	ics := pod.Status.InitContainerStatuses[0]
	last := ics.LastTerminationState.Terminated
	if last == nil || last.ExitCode != 7 || last.Reason != "Error" || !strings.Contains(last.Message, "migration failed: no database") {
		t.Errorf("migrate lastState %+v, want exit code 7, reason Error and its output", ics.LastTerminationState)
	}
	if ics.Ready || ics.Image != ref || ics.ImageID != host+"/team/app@"+digest {
		t.Errorf("migrate: ready %v image %q imageID %q, want not ready, %s and %s@%s", ics.Ready, ics.Image, ics.ImageID, ref, host+"/team/app", digest)
	}
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s, want Pending", pod.Status.Phase)
	}
	if c := podConditionOf(&pod, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotInitialized" ||
		c.Message != "containers with incomplete status: [migrate]" {
		t.Errorf("condition Initialized %+v, want False, ContainersNotInitialized, naming migrate", c)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w == nil || w.Reason != "PodInitializing" || cs.Ready {
			t.Errorf("container %s: %+v, want waiting PodInitializing", cs.Name, cs)
		}
	}
	logs := filepath.Join(suite.state, "logs", ns, "blocked")
	for _, name := range []string{"user-container", "sidecar"} {
		if matches, _ := filepath.Glob(filepath.Join(logs, "*-"+name+".log")); len(matches) > 0 {
			t.Errorf("%s has a log, %v: it was started", name, matches)
		}
	}
	if _, err := os.Stat(logs); errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no logs in %s: the init container never ran", logs)
	}

	got := waitForDeployment(t, client.ObjectKeyFromObject(d), 30*time.Second, "CrashLoopBackOff", failingWith(ReasonCrashLoopBackOff))
	if msg := condition(got, appsv1.DeploymentReplicaFailure).Message; !strings.HasPrefix(msg, "init container migrate exited with code 7") ||
		!strings.Contains(msg, "migration failed: no database") {
		t.Errorf("ReplicaFailure message %q, want the init container's exit and output", msg)
	}
}

// podConditionOf is the Pod's condition of type typ, nil if none.
func podConditionOf(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
