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
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/internal/testregistry"
)

// TestImageRunsConfinedToItsRoot: a plain image from a private registry
// (credentials through the ServiceAccount's imagePullSecrets) runs as its
// config says — entrypoint, env, workingDir, USER — with the image's
// root filesystem as its root: knit dev's state dir is not there. Its
// Pod reports the digest it runs; its exec probe runs inside it.
func TestImageRunsConfinedToItsRoot(t *testing.T) {
	startSuite(t)
	needImages(t)
	t.Parallel()
	ns := newNamespace(t)
	host, ref, digest := privateImage(t, ns, "1.2", v1.Config{
		Entrypoint: []string{"/app/httpserver"}, WorkingDir: "/srv", User: "nonroot",
		Env: []string{"PATH=/bin", "GREETING=from the image"},
	})
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}}})

	app := appContainer(ref)
	app.Env = []corev1.EnvVar{{Name: "PORT", Value: "8080"}} // GREETING stays the image's
	app.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", `test "$(id -u)" = 65532 && test -x /app/httpserver`}}},
		PeriodSeconds: 1,
	}
	d := revisionDeployment(ns, "image", 1, app)
	d.Spec.Template.Spec.ServiceAccountName = "app"
	create(t, d)
	create(t, service(ns, "image", map[string]string{"app": "image"}, intstr.FromString("http")))
	waitForDeployment(t, client.ObjectKeyFromObject(d), 2*time.Minute, "available", available)
	slice := readySlices(t, ns, "image", 1)[0]
	port := *slice.Ports[0].Port

	who := whoami(t, port)
	for k, want := range map[string]string{"uid": "65532", "gid": "65532", "cwd": "/srv", "argv0": "/app/httpserver", "home": "/home/nonroot"} {
		if who[k] != want {
			t.Errorf("%s = %q, want %q (the image's config)", k, who[k], want)
		}
	}
	if body, _ := get(t, slice); !strings.HasSuffix(strings.TrimSpace(body), ": from the image") {
		t.Errorf("answer %q: want the image's GREETING", body)
	}
	for _, hostPath := range []string{suite.state, suite.state + "/runtime.log", "/etc/shadow"} {
		if status, body, _ := fileAt(t, http.MethodGet, port, hostPath, ""); status == http.StatusOK {
			t.Errorf("the app read this machine's %s: %.80q", hostPath, body)
		}
	}
	if status, body, _ := fileAt(t, http.MethodGet, port, "/etc/passwd", ""); status != http.StatusOK || !strings.Contains(body, "nonroot:x:65532") {
		t.Errorf("/etc/passwd is not the image's: %d %.80q", status, body)
	}

	pod := onlyPod(t, ns, "image")
	cs := pod.Status.ContainerStatuses[0]
	if cs.ImageID != host+"/team/app@"+digest || !strings.HasPrefix(cs.ContainerID, "runc://") {
		t.Errorf("container status imageID %q containerID %q; want %s@%s and a runc:// ID", cs.ImageID, cs.ContainerID, host+"/team/app", digest)
	}
}

// TestImageSecurityContext: a dropped capability is gone, a read-only
// root cannot be written, no_new_privs is set, and RuntimeDefault seccomp
// filters, as a container runtime applies them.
func TestImageSecurityContext(t *testing.T) {
	startSuite(t)
	needImages(t)
	t.Parallel()
	ns := newNamespace(t)
	_, ref, _ := privateImage(t, ns, "locked", v1.Config{Entrypoint: []string{"/app/httpserver"}, WorkingDir: "/srv"})

	app := appContainer(ref)
	app.SecurityContext = &corev1.SecurityContext{
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}},
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	app.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	d := revisionDeployment(ns, "locked", 1, app)
	d.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	create(t, d)
	create(t, service(ns, "locked", map[string]string{"app": "locked"}, intstr.FromString("http")))
	waitForDeployment(t, client.ObjectKeyFromObject(d), 2*time.Minute, "available", available)
	port := *readySlices(t, ns, "locked", 1)[0].Ports[0].Port

	_, status, _ := fileAt(t, http.MethodGet, port, "/proc/self/status", "")
	caps := procStatus(status)
	eff, err := strconv.ParseUint(caps["CapEff"], 16, 64)
	if err != nil {
		t.Fatalf("CapEff in /proc/self/status %q: %v", status, err)
	}
	const capNetRaw, capChown = 13, 0
	if eff&(1<<capNetRaw) != 0 || eff&(1<<capChown) == 0 {
		t.Errorf("CapEff %s: want NET_RAW dropped and the default CHOWN kept", caps["CapEff"])
	}
	if caps["NoNewPrivs"] != "1" || caps["Seccomp"] != "2" {
		t.Errorf("NoNewPrivs %q Seccomp %q: want 1 and 2 (filtering)", caps["NoNewPrivs"], caps["Seccomp"])
	}
	if code, body, _ := fileAt(t, http.MethodPut, port, "/srv/written", "x"); code == http.StatusOK || !strings.Contains(body, "read-only file system") {
		t.Errorf("write to the read-only root: %d %q", code, body)
	}
	if code, body, _ := fileAt(t, http.MethodPut, port, "/scratch/written", "x"); code != http.StatusOK {
		t.Errorf("write to the emptyDir under a read-only root: %d %q", code, body)
	}
}

// TestImagePullFailureSaysWhy: wrong credentials leave the Deployment
// failing with the kubelet's reason and the registry's word, and the Pod
// waiting with it; a runAsNonRoot pod of a root image is refused.
func TestImagePullFailureSaysWhy(t *testing.T) {
	startSuite(t)
	needImages(t)
	t.Parallel()
	ns := newNamespace(t)
	host, ref, _ := privateImage(t, ns, "2", v1.Config{Entrypoint: []string{"/app/httpserver"}})
	create(t, testregistry.PullSecret(ns, "wrong", host, registryUser, "not-the-password"))

	d := revisionDeployment(ns, "denied", 1, appContainer(ref))
	d.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "wrong"}}
	create(t, d)
	got := waitForDeployment(t, client.ObjectKeyFromObject(d), time.Minute, "a pull failure", func(d *appsv1.Deployment) bool {
		return failingWith("ErrImagePull")(d) || failingWith("ImagePullBackOff")(d)
	})
	if msg := condition(got, appsv1.DeploymentReplicaFailure).Message; !strings.Contains(msg, "UNAUTHORIZED") || strings.Contains(msg, "not-the-password") {
		t.Errorf("message %q: want the registry's UNAUTHORIZED, and no password", msg)
	}

	app := appContainer(ref)
	app.SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}
	root := revisionDeployment(ns, "root", 1, app)
	root.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	create(t, root)
	got = waitForDeployment(t, client.ObjectKeyFromObject(root), time.Minute, "refused", failingWith(ReasonCreateContainerConfigError))
	if msg := condition(got, appsv1.DeploymentReplicaFailure).Message; !strings.Contains(msg, "image will run as root") {
		t.Errorf("message %q: want the kubelet's runAsNonRoot words", msg)
	}
}

func procStatus(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// onlyPod is the one Pod of a Deployment's pods labelled app=name.
func onlyPod(t *testing.T, ns, name string) corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := suite.reader.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) == 0 {
		t.Fatalf("want one pod with container statuses of %s, got %+v", name, pods.Items)
	}
	return pods.Items[0]
}

// TestTagPushedAgainLeavesTheTemplateOnItsDigest: a tag pushed again
// while a template runs does not reach its next replicas, even with
// imagePullPolicy Always: they run the digest its first replica pulled.
func TestTagPushedAgainLeavesTheTemplateOnItsDigest(t *testing.T) {
	startSuite(t)
	needImages(t)
	t.Parallel()
	ns := newNamespace(t)
	_, ref, first := privateImage(t, ns, "stable", v1.Config{Entrypoint: []string{"/app/httpserver"}, Env: []string{"GREETING=first push"}})
	app := appContainer(ref)
	app.Env = []corev1.EnvVar{{Name: "PORT", Value: "8080"}}
	app.ImagePullPolicy = corev1.PullAlways
	d := revisionDeployment(ns, "pinned", 1, app)
	d.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	create(t, d)
	create(t, service(ns, "pinned", map[string]string{"app": "pinned"}, intstr.FromString("http")))
	waitForDeployment(t, client.ObjectKeyFromObject(d), 2*time.Minute, "available", available)

	second := pushImage(t, ref, v1.Config{Entrypoint: []string{"/app/httpserver"}, Env: []string{"GREETING=second push"}}, appImage())
	if second == first {
		t.Fatal("the second push has the first's digest: nothing would tell them apart")
	}
	scaled := &appsv1.Deployment{}
	if err := suite.client.Get(context.Background(), client.ObjectKeyFromObject(d), scaled); err != nil {
		t.Fatal(err)
	}
	scaled.Spec.Replicas = ptr.To[int32](2)
	if err := suite.client.Update(context.Background(), scaled); err != nil {
		t.Fatal(err)
	}
	for _, s := range readySlices(t, ns, "pinned", 2) {
		if body, _ := get(t, s); !strings.Contains(body, "first push") {
			t.Errorf("replica %s answers %q: want the first push's image", s.Name, body)
		}
	}
}

// privateImage pushes the app image with cfg as team/app:tag to a
// registry of the test's that wants credentials, and gives namespace ns
// the Secret "registry" that holds them.
func privateImage(t *testing.T, ns, tag string, cfg v1.Config) (host, ref, digest string) {
	t.Helper()
	host = testRegistry(t)
	ref = host + "/team/app:" + tag
	digest = pushImage(t, ref, cfg, appImage())
	create(t, testregistry.PullSecret(ns, "registry", host, registryUser, registryPassword))
	return host, ref, digest
}

// TestScaleFromZeroTakesASpareRoot: once an image has run, the root
// filesystem of its next run is made ahead, and a replica started from
// zero runs in it; the spare is a mounted root with no run in it, so it
// is neither a container nor left behind.
func TestScaleFromZeroTakesASpareRoot(t *testing.T) {
	startSuite(t)
	needImages(t)
	t.Parallel()
	ns := newNamespace(t)
	// An image of this test's own (its digest unlike any other test's),
	// so that no other test takes its spare.
	_, ref, digest := privateImage(t, ns, "spare", v1.Config{Entrypoint: []string{"/app/httpserver"}, Env: []string{"GREETING=" + ns}})
	app := appContainer(ref)
	app.Env = []corev1.EnvVar{{Name: "PORT", Value: "8080"}}
	d := revisionDeployment(ns, "spare", 1, app)
	d.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	create(t, d)
	waitForDeployment(t, client.ObjectKeyFromObject(d), 2*time.Minute, "available", available)
	first := runningContainerID(t, ns, "spare", "")

	spare := waitForSpare(t, digest)
	if "runc://"+spare == first {
		t.Fatalf("the spare %s is the running container's own root", spare)
	}
	bundle := filepath.Join(suite.state, "containers", spare)
	if _, err := os.Stat(filepath.Join(bundle, "rootfs", "app", "httpserver")); err != nil {
		t.Fatalf("the spare's root filesystem is not the image's: %v", err)
	}
	if _, err := os.Stat(filepath.Join(bundle, "config.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the spare has a spec before any run took it (%v)", err)
	}

	scale(t, d, 0)
	waitForDeployment(t, client.ObjectKeyFromObject(d), time.Minute, "no replicas", func(d *appsv1.Deployment) bool { return d.Status.Replicas == 0 })
	scale(t, d, 1)
	waitForDeployment(t, client.ObjectKeyFromObject(d), 2*time.Minute, "available", available)
	if got := runningContainerID(t, ns, "spare", first); got != "runc://"+spare {
		t.Fatalf("the replica started from zero runs %s; want the spare runc://%s", got, spare)
	}
	if _, err := os.Stat(filepath.Join(suite.state, "containers", strings.TrimPrefix(first, "runc://"))); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the first run's bundle is still there after it stopped (%v)", err)
	}
}

// waitForSpare waits for the suite's image runtime to hold a spare root
// filesystem of the image with digest, and answers its run id.
func waitForSpare(t *testing.T, digest string) string {
	t.Helper()
	spares := suite.oci.spares
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		spares.mu.Lock()
		id, ok := spares.ready[digest]
		spares.mu.Unlock()
		if ok {
			return id
		}
	}
	t.Fatalf("no spare root filesystem of %s made", digest)
	return ""
}

// runningContainerID waits for the one Pod labelled app=name whose first
// container runs, as another run than not, and answers its container ID.
// Pods are written after their replicas start.
func runningContainerID(t *testing.T, ns, name, not string) string {
	t.Helper()
	last := "no pod"
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var pods corev1.PodList
		if err := suite.reader.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
			t.Fatal(err)
		}
		last = fmt.Sprintf("%d pods", len(pods.Items))
		if len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) == 0 {
			continue
		}
		cs := pods.Items[0].Status.ContainerStatuses[0]
		last = fmt.Sprintf("container %s running: %v", cs.ContainerID, cs.State.Running != nil)
		if cs.State.Running != nil && cs.ContainerID != "" && cs.ContainerID != not {
			return cs.ContainerID
		}
	}
	t.Fatalf("no running container in the pod of %s: %s", name, last)
	return ""
}

// scale sets d's replicas.
func scale(t *testing.T, d *appsv1.Deployment, n int32) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &appsv1.Deployment{}
		if err := suite.client.Get(context.Background(), client.ObjectKeyFromObject(d), cur); err != nil {
			return err
		}
		cur.Spec.Replicas = ptr.To(n)
		return suite.client.Update(context.Background(), cur)
	})
	if err != nil {
		t.Fatal(err)
	}
}
