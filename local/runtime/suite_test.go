//go:build !unit

package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// httpServer is testdata/httpserver, built once by TestMain: the app the
// envtest tests run through a container command.
var httpServer string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "knit-runtime-test-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		httpServer = filepath.Join(dir, "httpserver")
		build := exec.Command("go", "build", "-o", httpServer, "./testdata/httpserver")
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // static: it also runs inside test images
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build testdata/httpserver: %v\n%s", err, out)
			return 1
		}
		code := m.Run()
		if suite.stop != nil {
			if err := suite.stop(code != 0); err != nil {
				fmt.Fprintln(os.Stderr, err)
				code = 1
			}
		}
		return code
	}())
}

// suite is one API server, manager and Runtime shared by the envtest
// tests; each test works in its own namespace.
var suite struct {
	once   sync.Once
	err    error
	client client.Client
	reader client.Reader // uncached
	rt     *Runtime
	state  string
	// ociErr is why the runtime runs no images (not root, no runc).
	ociErr error
	oci    *OCI
	// expected is what the runtime announced through ExpectSlices.
	expected announcements
	stop     func(keepState bool) error
}

// startSuite starts the shared control plane on first use.
func startSuite(t *testing.T) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is unset: run `make tools` and `KUBEBUILDER_ASSETS=$PWD/bin go test ./local/runtime/...`, or `go test -tags unit` for the unit tests alone")
	}
	suite.once.Do(func() { suite.err = setUpSuite() })
	if suite.err != nil {
		t.Fatalf("envtest suite: %v", suite.err)
	}
}

func setUpSuite() error {
	state, err := os.MkdirTemp("", "knit-runtime-test-state")
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(state, "runtime.log"))
	if err != nil {
		return err
	}
	logger := logr.FromSlogHandler(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.Level(-1)}))
	ctrl.SetLogger(logger)

	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("start envtest: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: clientgoscheme.Scheme, Logger: logger,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	oci, ociErr := OpenOCI(context.Background(), OCIOptions{StateDir: state})
	suite.ociErr = ociErr
	rt, err := New(Options{StateDir: state, Executable: httpServer, ShutdownGracePeriod: 5 * time.Second, SourceDir: annotatedSourceDir, VolumeSyncPeriod: 200 * time.Millisecond, OCI: oci,
		ExpectSlices: suite.expected.record})
	if err != nil {
		return err
	}
	if err := rt.SetupWithManager(mgr); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	suite.client, suite.reader, suite.rt, suite.state, suite.oci = mgr.GetClient(), mgr.GetAPIReader(), rt, state, oci
	suite.stop = func(keepState bool) error {
		cancel()
		err := <-done
		if err == nil {
			err = rt.Shutdown(context.Background()) // already done by the manager; must be harmless
		}
		if oci != nil {
			// The spare root filesystems are mounts under the state
			// directory: unmounted before it is removed.
			if closeErr := oci.Close(); err == nil {
				err = closeErr
			}
		}
		if stopErr := env.Stop(); err == nil {
			err = stopErr
		}
		logFile.Close()
		if err != nil || keepState || os.Getenv("KNIT_TEST_KEEP_STATE") != "" {
			fmt.Fprintf(os.Stderr, "runtime state and log kept in %s\n", state)
			return err
		}
		return os.RemoveAll(state)
	}
	return nil
}

// announcements are the slices the runtime announced, per Service, in
// the order it did.
type announcements struct {
	mu  sync.Mutex
	log map[types.NamespacedName][][]discoveryv1.EndpointSlice
}

func (a *announcements) record(svc types.NamespacedName, _ map[string]string, slices []discoveryv1.EndpointSlice) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.log == nil {
		a.log = map[types.NamespacedName][][]discoveryv1.EndpointSlice{}
	}
	a.log[svc] = append(a.log[svc], slices)
}

// of is every announcement for svc so far.
func (a *announcements) of(svc types.NamespacedName) [][]discoveryv1.EndpointSlice {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.log[svc])
}

// newNamespace makes a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rt-"}}
	if err := suite.client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Logf("namespace %s; runtime log in %s", ns.Name, filepath.Join(suite.state, "runtime.log"))
	return ns.Name
}

// revisionDeployment is a Deployment as the revision reconciler makes
// one: the revision label on it and its pods.
func revisionDeployment(ns, name string, replicas int32, containers ...corev1.Container) *appsv1.Deployment {
	labels := map[string]string{servingv1.RevisionLabelKey: name, "app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{servingv1.RevisionLabelKey: name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: containers, TerminationGracePeriodSeconds: ptr.To[int64](3)},
			},
		},
	}
}

// create creates obj and deletes it when the test ends (envtest has no
// garbage collector; deleting the Deployment stops its processes).
func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := suite.client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), obj) })
}

// eventually polls cond every 50ms until it holds or timeout passes; cond
// describes what it saw, for the failure message.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// deploymentStatus polls the Deployment until check passes.
func waitForDeployment(t *testing.T, key types.NamespacedName, timeout time.Duration, what string, check func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	eventually(t, timeout, what, func() (bool, string) {
		if err := suite.client.Get(context.Background(), key, &d); err != nil {
			return false, err.Error()
		}
		return check(&d), fmt.Sprintf("%+v", d.Status)
	})
	return &d
}

func condition(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == typ {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// failingWith is a check for a ReplicaFailure with this reason.
func failingWith(reason string) func(*appsv1.Deployment) bool {
	return func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentReplicaFailure)
		return c != nil && c.Status == corev1.ConditionTrue && c.Reason == reason
	}
}

// replicaPIDs are the processes the runtime runs for a Deployment.
func replicaPIDs(key types.NamespacedName) []int {
	suite.rt.mu.Lock()
	defer suite.rt.mu.Unlock()
	var pids []int
	if st := suite.rt.deployments[key]; st != nil {
		for _, r := range st.replicas {
			pids = append(pids, r.pids()...)
		}
	}
	return pids
}

// sourceDirAnnotation stands in for knit dev's Git checkouts: a pod
// template carrying it builds its ko:// images in that directory.
const sourceDirAnnotation = "test.knit.dev/source-dir"

func annotatedSourceDir(_ context.Context, _ string, _, annotations map[string]string) (string, error) {
	return annotations[sourceDirAnnotation], nil
}

// sharedTempDir is a t.TempDir every user may search and read, for the
// files a test shares with a container, which runs as ko's nonroot user
// (65532) unless it asks otherwise.
func sharedTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
