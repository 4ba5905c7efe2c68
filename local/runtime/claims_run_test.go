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
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/claims"
)

// startClaims starts the suite, whose runtime's SetupWithManager starts
// its claim binder too, as knit dev's does.
func startClaims(t *testing.T) {
	t.Helper()
	startSuite(t)
}

// newClaim is a 1Gi ReadWriteOnce claim of class "local".
func newClaim(ns, name string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("local"),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

// waitBound waits for the claim to be Bound and returns it with its volume.
func waitBound(t *testing.T, key types.NamespacedName) (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	t.Helper()
	var claim corev1.PersistentVolumeClaim
	eventually(t, 30*time.Second, "claim "+key.String()+" bound", func() (bool, string) {
		if err := suite.reader.Get(context.Background(), key, &claim); err != nil {
			return false, err.Error()
		}
		return claim.Status.Phase == corev1.ClaimBound, fmt.Sprintf("%+v %+v", claim.Spec, claim.Status)
	})
	var pv corev1.PersistentVolume
	if err := suite.reader.Get(context.Background(), client.ObjectKey{Name: claim.Spec.VolumeName}, &pv); err != nil {
		t.Fatalf("volume of claim %s: %v", key, err)
	}
	return &claim, &pv
}

// waitGone waits until obj is no longer in the API server.
func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%T %s gone", obj, obj.GetName()), func() (bool, string) {
		err := suite.reader.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), fmt.Sprintf("%v, finalizers %v, deleting since %v", err, obj.GetFinalizers(), obj.GetDeletionTimestamp())
	})
}

// waitNoDir waits until dir is removed.
func waitNoDir(t *testing.T, dir string) {
	t.Helper()
	eventually(t, 30*time.Second, dir+" removed", func() (bool, string) {
		_, err := os.Stat(dir)
		return errors.Is(err, fs.ErrNotExist), fmt.Sprint(err)
	})
}

// TestClaimBoundAsKubernetesBindsIt: a claim no replica uses yet is
// provisioned a directory in the state dir and bound to its volume, both
// sides written as the PV controller writes them; deleted, it goes, and
// its volume and directory with it.
func TestClaimBoundAsKubernetesBindsIt(t *testing.T) {
	startClaims(t)
	t.Parallel()
	ns := newNamespace(t)
	create(t, newClaim(ns, "data"))
	claim, pv := waitBound(t, types.NamespacedName{Namespace: ns, Name: "data"})

	dir := filepath.Join(suite.state, "claims", ns, "data-"+string(claim.UID))
	oneGi := resource.MustParse("1Gi")
	if claim.Spec.VolumeName != "pvc-"+string(claim.UID) || !claim.Status.Capacity.Storage().Equal(oneGi) ||
		len(claim.Status.AccessModes) != 1 || claim.Status.AccessModes[0] != corev1.ReadWriteOnce ||
		claim.Annotations["pv.kubernetes.io/bind-completed"] != "yes" || claim.Annotations["pv.kubernetes.io/bound-by-controller"] != "yes" {
		t.Errorf("claim: volumeName %q, status %+v, annotations %v", claim.Spec.VolumeName, claim.Status, claim.Annotations)
	}
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.Kind != "PersistentVolumeClaim" || ref.Namespace != ns || ref.Name != "data" || ref.UID != claim.UID {
		t.Errorf("volume claimRef %+v, want the claim with its UID", ref)
	}
	if pv.Status.Phase != corev1.VolumeBound || pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != dir ||
		!pv.Spec.Capacity.Storage().Equal(oneGi) || len(pv.Spec.AccessModes) != 1 || pv.Spec.AccessModes[0] != corev1.ReadWriteOnce ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.Spec.StorageClassName != "local" ||
		pv.Annotations["pv.kubernetes.io/provisioned-by"] != claims.Provisioner {
		t.Errorf("volume: spec %+v, status %+v, annotations %v; want a hostPath at %s", pv.Spec, pv.Status, pv.Annotations, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o777 {
		t.Fatalf("the claim's directory: %v %v, want a directory, mode 0777", fi, err)
	}

	if err := suite.client.Delete(context.Background(), claim); err != nil {
		t.Fatal(err)
	}
	waitGone(t, claim)
	waitGone(t, pv)
	waitNoDir(t, dir)
}

// claimApp is a Deployment of the app image, as user and group 65532 with
// fsGroup 65532, mounting volumes.
func claimApp(t *testing.T, ns, name string, volumes []corev1.Volume, mounts ...corev1.VolumeMount) *appsv1.Deployment {
	t.Helper()
	app := appContainer(suiteImage(t), "/app/httpserver")
	app.VolumeMounts = mounts
	d := revisionDeployment(ns, name, 1, app)
	d.Spec.Template.Spec.Volumes = volumes
	d.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532), FSGroup: ptr.To[int64](65532),
	}
	return d
}

// claimVolume is a volume of the claim.
func claimVolume(name, claim string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
		ClaimName: claim, ReadOnly: readOnly,
	}}}
}

// serve creates d and a Service for it, waits for it to be available and
// answers its replica's port.
func serve(t *testing.T, d *appsv1.Deployment) int32 {
	t.Helper()
	create(t, d)
	create(t, service(d.Namespace, d.Name, map[string]string{"app": d.Name}, intstr.FromString("http")))
	waitForDeployment(t, client.ObjectKeyFromObject(d), 2*time.Minute, d.Name+" available", available)
	return *readySlices(t, d.Namespace, d.Name, 1)[0].Ports[0].Port
}

// stopDeployment deletes d and waits for its replicas to be gone.
func stopDeployment(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	if err := suite.client.Delete(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(d)
	eventually(t, 30*time.Second, key.String()+"'s replicas gone", func() (bool, string) {
		suite.rt.mu.Lock()
		defer suite.rt.mu.Unlock()
		_, ok := suite.rt.deployments[key]
		return !ok, "still running"
	})
}

// TestClaimSharedAndKept: what a replica running as a user of its own
// (fsGroup 65532) writes into its claim, another Revision's replica reads,
// and cannot write through a read-only volume or mount; it is there for
// a third once both are gone. Deleted while that one runs, the claim's
// directory stays until it stops, then goes.
func TestClaimSharedAndKept(t *testing.T) {
	startClaims(t)
	needImages(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	create(t, newClaim(ns, "shared"))

	writer := claimApp(t, ns, "writer", []corev1.Volume{claimVolume("data", "shared", false)},
		corev1.VolumeMount{Name: "data", MountPath: "/data"})
	port := serve(t, writer)
	if status, body, _ := fileAt(t, http.MethodPut, port, "/data/note", "kept across replicas"); status != http.StatusOK {
		t.Fatalf("the app writes its claim: %d %s", status, body)
	}
	claim, pv := waitBound(t, types.NamespacedName{Namespace: ns, Name: "shared"})
	dir := pv.Spec.HostPath.Path
	if content, err := os.ReadFile(filepath.Join(dir, "note")); err != nil || string(content) != "kept across replicas" {
		t.Errorf("the claim's directory holds %q (%v), want what the app wrote", content, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Gid != 65532 || fi.Mode()&fs.ModeSetgid == 0 {
		t.Errorf("the claim's directory: group %d, mode %s; want the pod's fsGroup 65532 and setgid", st.Gid, fi.Mode())
	}

	reader := claimApp(t, ns, "reader",
		[]corev1.Volume{claimVolume("ro", "shared", true), claimVolume("rw", "shared", false)},
		corev1.VolumeMount{Name: "ro", MountPath: "/by-volume"},
		corev1.VolumeMount{Name: "rw", MountPath: "/by-mount", ReadOnly: true},
	)
	readerPort := serve(t, reader)
	for _, base := range []string{"/by-volume", "/by-mount"} {
		if status, content, _ := fileAt(t, http.MethodGet, readerPort, base+"/note", ""); status != http.StatusOK || content != "kept across replicas" {
			t.Errorf("another Revision reads %s/note: %d %q", base, status, content)
		}
		if status, body, _ := fileAt(t, http.MethodPut, readerPort, base+"/other", "x"); status == http.StatusOK || !strings.Contains(body, "read-only file system") {
			t.Errorf("write through %s: %d %s, want a read-only file system", base, status, body)
		}
	}

	stopDeployment(t, writer)
	stopDeployment(t, reader)
	again := claimApp(t, ns, "again", []corev1.Volume{claimVolume("data", "shared", false)},
		corev1.VolumeMount{Name: "data", MountPath: "/data"})
	againPort := serve(t, again)
	if status, content, _ := fileAt(t, http.MethodGet, againPort, "/data/note", ""); status != http.StatusOK || content != "kept across replicas" {
		t.Errorf("after its replicas and Revisions went, the claim holds %d %q", status, content)
	}

	if err := suite.client.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * claims.Resync) // passes enough to take it, were it not in use
	if _, err := os.Stat(filepath.Join(dir, "note")); err != nil {
		t.Errorf("a deleted claim's directory went while a replica used it: %v", err)
	}
	if status, content, _ := fileAt(t, http.MethodGet, againPort, "/data/note", ""); status != http.StatusOK {
		t.Errorf("the replica reads its deleted claim: %d %q", status, content)
	}
	stopDeployment(t, again)
	waitGone(t, claim)
	waitGone(t, pv)
	waitNoDir(t, dir)
}

// TestClaimMissingKeepsPodPending: a replica whose claim does not exist
// waits before it is placed, as the scheduler's volume binding holds a
// pod back: its Pod Pending in the scheduler's words, no share of this
// machine taken, no container started — not even the queue-proxy, which
// mounts no claim — no crash loop, and its own words in the log. It
// starts once the claim is created, its init container writing into the
// claim what the app then reads: one directory, resolved once.
func TestClaimMissingKeepsPodPending(t *testing.T) {
	startClaims(t)
	needImages(t)
	t.Parallel()
	ns := newNamespace(t)
	d := claimApp(t, ns, "late", []corev1.Volume{claimVolume("data", "later", false)},
		corev1.VolumeMount{Name: "data", MountPath: "/data"})
	queue := corev1.Container{
		Name: "queue-proxy", Image: "knit://serve", Env: []corev1.EnvVar{{Name: "PORT", Value: "8012"}},
		Ports:     []corev1.ContainerPort{{Name: "queue", ContainerPort: 8012}},
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("25m")}},
	}
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, queue)
	d.Spec.Template.Spec.InitContainers = []corev1.Container{{
		Name: "seed", Image: suiteImage(t), Command: []string{"/bin/sh", "-c", "echo seeded > /seed/from-init"},
		VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/seed"}},
	}}
	create(t, d)
	create(t, service(ns, "late", map[string]string{"app": "late"}, intstr.FromString("http")))
	key := client.ObjectKeyFromObject(d)

	want := `0/1 nodes are available: persistentvolumeclaim "later" not found.`
	var pod corev1.Pod
	eventually(t, time.Minute, "a Pending pod waiting for its claim", func() (bool, string) {
		var pods corev1.PodList
		if err := suite.reader.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": "late"}); err != nil || len(pods.Items) != 1 {
			return false, fmt.Sprintf("%v, %d pods", err, len(pods.Items))
		}
		pod = pods.Items[0]
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && c.Message == want {
				return pod.Status.Phase == corev1.PodPending, string(pod.Status.Phase)
			}
		}
		return false, fmt.Sprintf("%s %+v", pod.Status.Phase, pod.Status.Conditions)
	})
	time.Sleep(2 * time.Second) // a crash loop, or the queue-proxy, would show by now
	got := &appsv1.Deployment{}
	if err := suite.client.Get(context.Background(), key, got); err != nil {
		t.Fatal(err)
	}
	if c := condition(got, appsv1.DeploymentReplicaFailure); c != nil {
		t.Errorf("a replica waiting for its claim fails: %s %s", c.Reason, c.Message)
	}
	if pids := replicaPIDs(key); len(pids) != 0 {
		t.Errorf("processes %v run before the claim exists", pids)
	}
	if placed := placedReplicas(key); placed != 0 {
		t.Errorf("%d replicas placed on this machine before their claim exists, holding its CPU", placed)
	}
	logged := runtimeLogLines(t, ns)
	if !strings.Contains(logged, "Replica waits for its persistent volume claims") || strings.Contains(logged, "Replica waits for room on this machine") {
		t.Errorf("the runtime's log of the wait, want the claims' words and not room's:\n%s", logged)
	}

	create(t, newClaim(ns, "later"))
	waitForDeployment(t, key, time.Minute, "available once the claim exists", available)
	port := *readySlices(t, ns, "late", 1)[0].Ports[0].Port
	if status, body, _ := fileAt(t, http.MethodGet, port, "/data/from-init", ""); status != http.StatusOK || body != "seeded\n" {
		t.Errorf("the app reads what its init container wrote into the claim: %d %q", status, body)
	}
	if status, body, _ := fileAt(t, http.MethodPut, port, "/data/f", "at last"); status != http.StatusOK {
		t.Errorf("write into the claim once it exists: %d %s", status, body)
	}
	pod = onlyPod(t, ns, "late")
	if pod.Status.Phase != corev1.PodRunning || pod.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("pod %s, restarts %d: want Running, never restarted", pod.Status.Phase, pod.Status.ContainerStatuses[0].RestartCount)
	}
	checkCompletedInits(t, pod, "seed")
}

// placedReplicas counts the Deployment's replicas placed on the runtime's
// node.
func placedReplicas(key types.NamespacedName) int {
	suite.rt.node.mu.Lock()
	defer suite.rt.node.mu.Unlock()
	n := 0
	for r := range suite.rt.node.placed {
		if r.key == key {
			n++
		}
	}
	return n
}

// runtimeLogLines are the lines of the suite's runtime log that mention
// ns.
func runtimeLogLines(t *testing.T, ns string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(suite.state, "runtime.log"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, ns) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
