//go:build !unit

package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/local/view"
)

// appContainer runs testdata/httpserver (or a ko:// build of it) on
// declared port 8080, probed over HTTP with a header.
func appContainer(image string, command ...string) corev1.Container {
	return corev1.Container{
		Name: "user-container", Image: image, Command: command,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		Env:   []corev1.EnvVar{{Name: "PORT", Value: "8080"}, {Name: "GREETING", Value: "listening on $(PORT)"}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intstr.FromString("http"), HTTPHeaders: []corev1.HTTPHeader{{Name: "K-Probe", Value: "yes"}},
			}},
			PeriodSeconds: 1, FailureThreshold: 3,
		},
	}
}

func service(ns, name string, selector map[string]string, target intstr.IntOrString) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: target},
		}},
	}
}

func slicesOf(t *testing.T, ns, svc string) []discoveryv1.EndpointSlice {
	t.Helper()
	var list discoveryv1.EndpointSliceList
	if err := suite.client.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: svc}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// readySlices waits for n slices of the Service, all ready, and returns them.
func readySlices(t *testing.T, ns, svc string, n int) []discoveryv1.EndpointSlice {
	t.Helper()
	var got []discoveryv1.EndpointSlice
	eventually(t, 30*time.Second, fmt.Sprintf("%d ready EndpointSlices of %s", n, svc), func() (bool, string) {
		got = slicesOf(t, ns, svc)
		ready := 0
		for _, s := range got {
			if len(s.Endpoints) == 1 && ptr.Deref(s.Endpoints[0].Conditions.Ready, false) {
				ready++
			}
		}
		return ready == n && len(got) == n, fmt.Sprintf("%d slices, %d ready", len(got), ready)
	})
	return got
}

// get fetches a slice's endpoint over HTTP.
func get(t *testing.T, s discoveryv1.EndpointSlice) (string, int32) {
	t.Helper()
	if len(s.Ports) != 1 || s.Endpoints[0].Addresses[0] != "127.0.0.1" || s.AddressType != discoveryv1.AddressTypeFQDN {
		t.Fatalf("slice %s: want one port on 127.0.0.1; got %+v %+v", s.Name, s.Endpoints, s.Ports)
	}
	port := *s.Ports[0].Port
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		t.Fatalf("slice %s: %v", s.Name, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body), port
}

func available(d *appsv1.Deployment) bool {
	c := condition(d, appsv1.DeploymentAvailable)
	return d.Status.ObservedGeneration == d.Generation && c != nil && c.Status == corev1.ConditionTrue &&
		d.Status.AvailableReplicas == ptr.Deref(d.Spec.Replicas, 1)
}

func TestReplicasServeAndScaleToZero(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "hello", 2, appContainer(suiteImage(t), "/app/httpserver"))
	create(t, d)
	create(t, service(ns, "hello", map[string]string{"app": "hello"}, intstr.FromString("http")))

	got := waitForDeployment(t, client.ObjectKeyFromObject(d), 30*time.Second, "2 ready replicas", func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentProgressing)
		return available(d) && d.Status.ReadyReplicas == 2 && c != nil && c.Reason == ReasonNewReplicaSetAvailable
	})
	if s := got.Status; s.Replicas != 2 || s.UpdatedReplicas != 2 || s.UnavailableReplicas != 0 || condition(got, appsv1.DeploymentReplicaFailure) != nil {
		t.Errorf("status = %+v", s)
	}

	slices := readySlices(t, ns, "hello", 2)
	ports := map[int32]bool{}
	for _, s := range slices {
		if s.Labels[discoveryv1.LabelManagedBy] != ManagedBy || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Name != "hello" || *s.Ports[0].Name != "http" {
			t.Errorf("slice %s: labels %v, owners %v, port %q", s.Name, s.Labels, s.OwnerReferences, *s.Ports[0].Name)
		}
		body, port := get(t, s)
		// HOSTNAME is the replica's pod name; $(PORT) expanded to the mapped port.
		if want := regexp.MustCompile(fmt.Sprintf(`^hello from hello-[0-9a-f]{10}-[a-z0-9]{5}: listening on %d\n$`, port)); !want.MatchString(body) {
			t.Errorf("slice %s answered %q, want %s", s.Name, body, want)
		}
		if !strings.HasPrefix(s.Name, "hello-") || ports[port] {
			t.Errorf("slice %s: port %d reused or name not <service>-<replica>", s.Name, port)
		}
		ports[port] = true
	}

	// A Service made after the replicas gets their slices too, with a numeric targetPort.
	create(t, service(ns, "hello-private", map[string]string{servingv1.RevisionLabelKey: "hello"}, intstr.FromInt32(8080)))
	for _, s := range readySlices(t, ns, "hello-private", 2) {
		if !ports[*s.Ports[0].Port] {
			t.Errorf("slice %s of the second Service has port %d, not one of %v", s.Name, *s.Ports[0].Port, ports)
		}
	}

	key := client.ObjectKeyFromObject(d)
	pids := replicaPIDs(key)
	if len(pids) != 2 {
		t.Fatalf("pids = %v, want 2", pids)
	}
	logs, _ := filepath.Glob(filepath.Join(suite.state, "logs", ns, "hello", "*-user-container.log"))
	if len(logs) != 2 {
		t.Errorf("log files = %v, want one per replica", logs)
	} else if b, _ := os.ReadFile(logs[0]); !strings.Contains(string(b), "listening on 127.0.0.1:") {
		t.Errorf("log %s = %q, want the server's output", logs[0], b)
	}

	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](0)
	if err := suite.client.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	waitForDeployment(t, key, 30*time.Second, "scaled to zero", func(d *appsv1.Deployment) bool {
		return available(d) && d.Status.Replicas == 0 && d.Status.ReadyReplicas == 0
	})
	eventually(t, 30*time.Second, "no slices", func() (bool, string) {
		n := len(slicesOf(t, ns, "hello")) + len(slicesOf(t, ns, "hello-private"))
		return n == 0, fmt.Sprintf("%d slices", n)
	})
	eventually(t, 10*time.Second, "replica processes gone", func() (bool, string) {
		var alive []int
		for _, pid := range pids {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				alive = append(alive, pid)
			}
		}
		return len(alive) == 0, fmt.Sprintf("alive: %v", alive)
	})
}

func TestCrashLoopBackOff(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "crashy", 1, corev1.Container{
		Name: "user-container", Image: suiteImage(t),
		Command: []string{"/bin/sh", "-c", "echo starting; echo 'fatal: config file /etc/crashy.yaml not found' >&2; exit 1"},
	})
	create(t, d)
	// Between two crashes the restarted process runs, and without a probe
	// a running container is ready, as on Kubernetes; so wait for a moment
	// in backoff, when the replica is unavailable.
	got := waitForDeployment(t, client.ObjectKeyFromObject(d), 30*time.Second, "CrashLoopBackOff after a restart, unavailable", func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentReplicaFailure)
		return failingWith(ReasonCrashLoopBackOff)(d) && regexp.MustCompile(`restarted [1-9]`).MatchString(c.Message) &&
			condition(d, appsv1.DeploymentAvailable).Status == corev1.ConditionFalse
	})
	msg := condition(got, appsv1.DeploymentReplicaFailure).Message
	if want := regexp.MustCompile(`^container user-container exited with code 1 \(restarted \d+ times\): fatal: config file /etc/crashy.yaml not found$`); !want.MatchString(msg) {
		t.Errorf("message = %q, want %s", msg, want)
	}
}

func TestKoImageBuildsOnce(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	// The same program spelled two ways: by import path and relative to the module dir.
	spellings := []string{"ko://github.com/knitops/knit/local/runtime/testdata/httpserver", "ko://./testdata/httpserver"}
	before := suite.rt.buildsRun(spellings...)
	a := revisionDeployment(ns, "ko-a", 1, appContainer(spellings[0]))
	b := revisionDeployment(ns, "ko-b", 1, appContainer(spellings[1]))
	create(t, a)
	create(t, service(ns, "ko-a", map[string]string{"app": "ko-a"}, intstr.FromString("http")))
	// A cold build compiles the standard library with -trimpath: minutes on a small machine.
	waitForDeployment(t, client.ObjectKeyFromObject(a), 5*time.Minute, "ko-a available", available)
	if body, _ := get(t, readySlices(t, ns, "ko-a", 1)[0]); !strings.HasPrefix(body, "hello from ko-a-") {
		t.Errorf("ko-a answered %q", body)
	}

	// The first spelling may have found another test's build in the
	// cache; the second must.
	secondBefore := suite.rt.buildsRun(spellings[1])
	create(t, b)
	waitForDeployment(t, client.ObjectKeyFromObject(b), time.Minute, "ko-b available", available)
	if n := suite.rt.buildsRun(spellings...) - before; n > 1 {
		t.Errorf("%d builds for one program, want at most one", n)
	}
	if n := suite.rt.buildsRun(spellings[1]) - secondBefore; n != 0 {
		t.Errorf("%d builds for the second spelling; the second Deployment should use the cache", n)
	}
	if bins, _ := filepath.Glob(filepath.Join(suite.state, "builds", "*", "httpserver")); len(bins) != 1 {
		t.Errorf("cached binaries = %v, want one", bins)
	}
}

func TestBuildFailed(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "broken", 1, appContainer("ko://./testdata/broken"))
	create(t, d)
	got := waitForDeployment(t, client.ObjectKeyFromObject(d), 2*time.Minute, "BuildFailed", failingWith(ReasonBuildFailed))
	msg := condition(got, appsv1.DeploymentReplicaFailure).Message
	if !strings.HasPrefix(msg, "go build ko://./testdata/broken: ") || !strings.Contains(msg, "undefined: undefinedFunction") {
		t.Errorf("message = %q, want the go build error", msg)
	}
}

// TestImageThatCannotRun: an image this machine cannot have fails its
// Deployment saying why — the pull's error where images run, what it
// takes where they cannot — and a Deployment that is no Revision's is
// left alone.
func TestImageThatCannotRun(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	const image = "127.0.0.1:1/library/nginx:1.27" // nothing listens on port 1
	unmanaged := revisionDeployment(ns, "not-a-revision", 1, appContainer(image))
	delete(unmanaged.Labels, servingv1.RevisionLabelKey)
	unmanaged.Spec.Selector.MatchLabels = map[string]string{"app": "not-a-revision"}
	create(t, unmanaged)
	d := revisionDeployment(ns, "nginx", 1, appContainer(image))
	create(t, d)
	reason, says := "ErrImagePull", "connection refused"
	if suite.ociErr != nil {
		reason, says = ReasonImageNotRunnable, "knit dev runs container images as root on Linux, with runc"
	}
	got := waitForDeployment(t, client.ObjectKeyFromObject(d), 30*time.Second, reason, func(d *appsv1.Deployment) bool {
		return failingWith(reason)(d) || failingWith("ImagePullBackOff")(d)
	})
	if msg := condition(got, appsv1.DeploymentReplicaFailure).Message; !strings.Contains(msg, says) || !strings.Contains(msg, image) {
		t.Errorf("message = %q, want it to name %s and say %q", msg, image, says)
	}
	var other appsv1.Deployment
	if err := suite.client.Get(context.Background(), client.ObjectKeyFromObject(unmanaged), &other); err != nil || other.Status.ObservedGeneration != 0 {
		t.Errorf("a Deployment without the revision label was touched: %v %+v", err, other.Status)
	}
}

func TestProgressDeadlineAndProbeFailure(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	c := corev1.Container{
		Name: "user-container", Image: suiteImage(t), Command: []string{"/bin/sh", "-c", "exec sleep 600"},
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 1, FailureThreshold: 1,
		},
	}
	d := revisionDeployment(ns, "deaf", 1, c)
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](3)
	create(t, d)
	got := waitForDeployment(t, client.ObjectKeyFromObject(d), 30*time.Second, "ProgressDeadlineExceeded", func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentProgressing)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == ReasonProgressDeadlineExceeded && failingWith(ReasonReadinessProbeFailed)(d)
	})
	msg := condition(got, appsv1.DeploymentReplicaFailure).Message
	if !strings.HasPrefix(msg, "container user-container readiness probe failed: dial tcp 127.0.0.1:") {
		t.Errorf("message = %q", msg)
	}
}

func TestKnitImageRunsTheExecutable(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	// The suite's Executable is testdata/httpserver, standing in for knit:
	// knit://queue runs `<executable> queue`.
	c := appContainer("knit://queue")
	c.Name, c.Ports[0].ContainerPort, c.Env[0].Value = "queue-proxy", 8012, "8012"
	d := revisionDeployment(ns, "queue", 1, c)
	create(t, d)
	waitForDeployment(t, types.NamespacedName{Namespace: ns, Name: "queue"}, 30*time.Second, "available", available)
}

// TestKoImageOfARequiredModule: ko://<a package of a required module>
// builds at the version the module dir's go.mod requires, as ko builds
// it, not at @latest: here the requirement is replaced by a local copy,
// which no download could find.
func TestKoImageOfARequiredModule(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"app/go.mod":  "module example.com/app\n\ngo 1.22\n\nrequire example.com/tool v1.0.0\n\nreplace example.com/tool => ../tool\n",
		"tool/go.mod": "module example.com/tool\n\ngo 1.22\n",
		"tool/cmd/hi/main.go": `package main

import (
	"fmt"
	"net/http"
	"os"
)

func main() {
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "the required tool") })
	http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil)
}
`,
	})
	c := appContainer("ko://example.com/tool/cmd/hi")
	c.ReadinessProbe = nil
	d := revisionDeployment(ns, "tool", 1, c)
	d.Spec.Template.Annotations = map[string]string{sourceDirAnnotation: filepath.Join(root, "app")}
	create(t, d)
	create(t, service(ns, "tool", map[string]string{"app": "tool"}, intstr.FromString("http")))
	waitForDeployment(t, client.ObjectKeyFromObject(d), 3*time.Minute, "tool available", available)
	// Without a readiness probe the replica is ready once started, which
	// may be before the program listens: ask until it answers.
	slice := readySlices(t, ns, "tool", 1)[0]
	url := fmt.Sprintf("http://127.0.0.1:%d/", *slice.Ports[0].Port)
	eventually(t, 30*time.Second, "the required module's program answering", func() (bool, string) {
		resp, err := http.Get(url)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body) == "the required tool", fmt.Sprintf("answer %q", body)
	})
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKoImageBuildsInSourceDir: a pod whose source dir Options.SourceDir
// names builds ko://./relative images there and runs there, the way knit
// dev builds a Git commit's checkout.
func TestKoImageBuildsInSourceDir(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"go.mod": "module example.com/pushed\n\ngo 1.22\n",
		"cmd/hi/main.go": `package main

import (
	"fmt"
	"net/http"
	"os"
)

func main() {
	wd, _ := os.Getwd()
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "pushed code in %s", wd) })
	http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil)
}
`,
	})
	c := appContainer("ko://./cmd/hi")
	c.ReadinessProbe = nil
	d := revisionDeployment(ns, "pushed", 1, c)
	d.Spec.Template.Annotations = map[string]string{sourceDirAnnotation: src}
	create(t, d)
	create(t, service(ns, "pushed", map[string]string{"app": "pushed"}, intstr.FromString("http")))
	waitForDeployment(t, client.ObjectKeyFromObject(d), 3*time.Minute, "pushed available", available)
	wd := src // no view of its own: it runs in its source, as a go run would
	if view.Supported() == nil {
		wd = "/" // where ko's image starts it
	}
	if body, _ := get(t, readySlices(t, ns, "pushed", 1)[0]); body != "pushed code in "+wd {
		t.Errorf("answer = %q, want the program built from %s, run in %s", body, src, wd)
	}
}
