//go:build !unit

package runtime

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/view"
)

// whoami asks an httpserver replica on port who and where it runs: its
// /whoami's key=value lines.
func whoami(t *testing.T, port int32) map[string]string {
	t.Helper()
	// The replicas these tests ask have exec readiness probes, which say
	// nothing of the HTTP port: under load the app may be Ready a moment
	// before it listens.
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err = http.Get(fmt.Sprintf("http://127.0.0.1:%d/whoami", port))
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		out[k] = v
	}
	return out
}

// TestRunAsUser: an app with runAsUser 2020 runs as uid 2020 (gid 0:
// no passwd entry names it, as containerd has it) with the pod's
// supplementalGroups and fsGroup, as Knative's TestMustRunAsUser asks;
// its binary, knit dev's own (knit://, the suite's Executable: a ko://
// build under a state dir in /root is the same case, without a build that
// TestKoImageBuildsOnce would count) in a directory only root may enter,
// is at /ko-app/httpserver, where ko would put it; it reads a ConfigMap of mode 0400
// through the fsGroup, writes its emptyDir; its exec readiness probe runs
// as the same user; its hostname is its pod's; it sees a /dev of its own,
// without /dev/console (TestShouldHaveFiles).
func TestRunAsUser(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	base := "/knit-user-test-" + ns
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}, Data: map[string]string{"key": "for the group"}})
	app := appContainer("knit://serve")
	app.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](2020)}
	app.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", `test "$(id -u)" = 2020 && test -x /ko-app/httpserver`}}},
		PeriodSeconds: 1,
	}
	app.VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: base + "/cfg"}, {Name: "scratch", MountPath: base + "/scratch"}}
	d := revisionDeployment(ns, "user", 1, app)
	d.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{SupplementalGroups: []int64{3000}, FSGroup: ptr.To[int64](4000)}
	d.Spec.Template.Spec.Volumes = []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, DefaultMode: ptr.To[int32](0o400),
		}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	if view.Supported() != nil {
		// Not root: the volumes are refused first; either way it does not run as the wrong user.
		waitForDeployment(t, key, time.Minute, "refused", func(d *appsv1.Deployment) bool {
			return failingWith(ReasonVolumesUnsupported)(d) || failingWith(ReasonSecurityContextUnsupported)(d)
		})
		return
	}
	create(t, service(ns, "user", map[string]string{"app": "user"}, intstr.FromString("http")))
	waitForDeployment(t, key, time.Minute, "available", available)
	port := *readySlices(t, ns, "user", 1)[0].Ports[0].Port

	who := whoami(t, port)
	for k, want := range map[string]string{
		"uid": "2020", "euid": "2020", "gid": "0", "egid": "0", "groups": "[3000 4000]",
		"argv0": "/ko-app/httpserver", "home": "/",
	} {
		if who[k] != want {
			t.Errorf("%s = %q, want %q", k, who[k], want)
		}
	}
	// The pod's name (user-<hash>-<id>) is its HOSTNAME and its hostname.
	if body, _ := get(t, readySlices(t, ns, "user", 1)[0]); !strings.HasPrefix(who["hostname"], "user-") || !strings.HasPrefix(body, "hello from "+who["hostname"]+":") {
		t.Errorf("hostname %q, HOSTNAME in %q: want the pod's name in both", who["hostname"], body)
	}

	if status, content, mode := fileAt(t, http.MethodGet, port, base+"/cfg/key", ""); status != http.StatusOK || content != "for the group" || mode != "0440" {
		t.Errorf("ConfigMap of mode 0400 with fsGroup: %d %q mode %s, want it read through the group, 0440", status, content, mode)
	}
	if status, body, _ := fileAt(t, http.MethodPut, port, base+"/scratch/mine", "written as 2020"); status != http.StatusOK {
		t.Errorf("write to the emptyDir as uid 2020: %d %s", status, body)
	}
	if status, body, _ := fileAt(t, http.MethodGet, port, "/dev/console", ""); status == http.StatusOK || !strings.Contains(body, "no such file or directory") {
		t.Errorf("/dev/console: %d %q, want it missing", status, body)
	}
	if status, _, mode := fileAt(t, http.MethodGet, port, "/dev/null", ""); status != http.StatusOK || mode != "0666" {
		t.Errorf("/dev/null: %d mode %s, want it readable, 0666", status, mode)
	}
	if status, body, _ := fileAt(t, http.MethodPut, port, "/dev/null", "discarded"); status != http.StatusOK {
		t.Errorf("write /dev/null: %d %s", status, body)
	}
}

// TestCommandKeepsKoAppArgv0: a command naming /ko-app/<name> of a ko://
// image runs knit dev's build with that argv[0], where the container has
// a view of its own (Knative's TestCmdArgs reads os.Args).
func TestCommandKeepsKoAppArgv0(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	app := appContainer("ko://github.com/knitops/knit/local/runtime/testdata/httpserver")
	app.Command = []string{"/ko-app/httpserver"}
	d := revisionDeployment(ns, "argv", 1, app)
	create(t, d)
	create(t, service(ns, "argv", map[string]string{"app": "argv"}, intstr.FromString("http")))
	waitForDeployment(t, client.ObjectKeyFromObject(d), 5*time.Minute, "available", available)
	who := whoami(t, *readySlices(t, ns, "argv", 1)[0].Ports[0].Port)
	want := "/ko-app/httpserver"
	if view.Supported() != nil {
		want = filepath.Join(suite.state, "builds") // no view of its own: the build's own path
	}
	if !strings.HasPrefix(who["argv0"], want) {
		t.Errorf("argv0 = %q, want %s", who["argv0"], want)
	}
}

// TestRunAsNonRoot: runAsNonRoot without runAsUser, where knit dev is
// root, is refused with the kubelet's words rather than run as root; a
// command of the container's own that its user cannot reach fails naming
// the directory that stops it, rather than with a bare permission denied.
func TestRunAsNonRoot(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	nonRoot := revisionDeployment(ns, "nonroot", 1, appContainer(suiteImage(t), "/app/httpserver"))
	nonRoot.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	create(t, nonRoot)
	if !ownIdentity().root() {
		waitForDeployment(t, client.ObjectKeyFromObject(nonRoot), time.Minute, "available: it runs as knit dev, not root", available)
		return
	}
	got := waitForDeployment(t, client.ObjectKeyFromObject(nonRoot), time.Minute, ReasonCreateContainerConfigError, failingWith(ReasonCreateContainerConfigError))
	if msg := condition(got, appsv1.DeploymentReplicaFailure).Message; !strings.HasPrefix(msg, `container has runAsNonRoot and image will run as root (pod: "nonroot-`) ||
		!strings.Contains(msg, "container: user-container)") {
		t.Errorf("message = %q, want the kubelet's", msg)
	}

	// TestMain builds httpserver in a directory of mode 0700; knit://
	// runs on this machine, where that is what stops the user.
	app := appContainer("knit://serve", httpServer)
	app.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](2020), RunAsGroup: ptr.To[int64](2020)}
	unreachable := revisionDeployment(ns, "unreachable", 1, app)
	create(t, unreachable)
	got = waitForDeployment(t, client.ObjectKeyFromObject(unreachable), time.Minute, ReasonRunContainerError, failingWith(ReasonRunContainerError))
	if msg, want := condition(got, appsv1.DeploymentReplicaFailure).Message, "container user-container runs as uid 2020, gid 2020, which cannot execute "+httpServer+": "; !strings.HasPrefix(msg, want) || !strings.Contains(msg, "is drwx------, owned by uid 0") {
		t.Errorf("message = %q, want %q and the directory that stops it", msg, want)
	}
}
