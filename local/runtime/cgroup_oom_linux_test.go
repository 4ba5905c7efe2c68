//go:build !unit

package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/knitops/knit/local/cgroups"
	"github.com/knitops/knit/local/view"
)

// A replica over its memory limit is OOMKilled, as in a pod, and says so;
// one without a limit allocating as much runs. Each container runs in a
// cgroup of its own with the kubelet's values, and the replica's cgroup
// is gone once it has stopped. Without cgroups (not root) both run, and
// the runtime knows the limit is not enforced.
func TestMemoryLimitOOMKillsReplica(t *testing.T) {
	startSuite(t)
	ns := newNamespace(t)
	bloated := func(name string, res corev1.ResourceRequirements) *appsv1.Deployment {
		c := appContainer(suiteImage(t), "/app/httpserver")
		c.Env = append(c.Env, corev1.EnvVar{Name: "ALLOCATE_MIB", Value: "256"})
		c.Resources = res
		return revisionDeployment(ns, name, 1, c)
	}
	limitedRes := corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi"), corev1.ResourceCPU: resource.MustParse("500m")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
	}
	// No memory limit; Knative's runtime conformance CPU: 1 limited, 125m requested.
	freeRes := corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("125m")},
	}
	limited, free := bloated("limited", limitedRes), bloated("free", freeRes)
	create(t, limited)
	create(t, free)
	limitedKey, freeKey := types.NamespacedName{Namespace: ns, Name: "limited"}, types.NamespacedName{Namespace: ns, Name: "free"}
	available := func(d *appsv1.Deployment) bool { return d.Status.AvailableReplicas == 1 }

	tree := suite.rt.cgroups.tree
	if tree == nil {
		if os.Geteuid() == 0 {
			t.Fatalf("no cgroups as root: %v", suite.rt.cgroups.err)
		}
		if msg := suite.rt.cgroups.unenforced(cgroups.ContainerLimits(limitedRes)); msg == "" {
			t.Error("no cgroups, yet the limit counts as enforced: nothing would warn")
		}
		waitForDeployment(t, limitedKey, 30*time.Second, "the unenforced limit's replica available", available)
		waitForDeployment(t, freeKey, 30*time.Second, "the unlimited replica available", available)
		return
	}

	d := waitForDeployment(t, limitedKey, 30*time.Second, "the limited replica OOMKilled", func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentReplicaFailure)
		return c != nil && c.Reason == ReasonCrashLoopBackOff && strings.Contains(c.Message, "OOMKilled")
	})
	want := "container user-container was OOMKilled: exit code 137, over its memory limit of 64Mi (restarted "
	if msg := condition(d, appsv1.DeploymentReplicaFailure).Message; !strings.HasPrefix(msg, want) {
		t.Errorf("ReplicaFailure message = %q, want it to start %q", msg, want)
	}
	d = waitForDeployment(t, freeKey, 30*time.Second, "the unlimited replica available", available)
	if c := condition(d, appsv1.DeploymentReplicaFailure); c != nil {
		t.Errorf("the unlimited replica fails: %s: %s", c.Reason, c.Message)
	}

	limitedPod, freePod := tree.Pod(replicaUID(t, limitedKey)), tree.Pod(replicaUID(t, freeKey))
	wantFiles := map[string]string{"memory.limit_in_bytes": "67108864", "cpu.cfs_quota_us": "50000", "cpu.cfs_period_us": "100000", "cpu.shares": "256"}
	if tree.Unified() {
		wantFiles = map[string]string{"memory.max": "67108864", "cpu.max": "50000 100000", "cpu.weight": "10"}
	}
	for name, want := range wantFiles {
		controller, _, _ := strings.Cut(name, ".")
		dir := limitedPod.Dirs()[controller]
		if tree.Unified() {
			dir = limitedPod.Dirs()[""]
		}
		b, err := os.ReadFile(filepath.Join(dir, "user-container", name))
		if got := strings.TrimSpace(string(b)); err != nil || got != want {
			t.Errorf("%s = %q (%v), want %q", name, got, err, want)
		}
	}
	pids := replicaPIDs(freeKey)
	if len(pids) != 1 {
		t.Fatalf("unlimited replica's processes = %v, want one", pids)
	}
	inCgroup(t, pids[0], freePod, "user-container")
	if view.Supported() == nil {
		seesItsOwnCgroup(t, appOf(t, pids[0]), tree)
	}

	for _, obj := range []*appsv1.Deployment{limited, free} {
		if err := suite.client.Delete(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, pod := range []*cgroups.Pod{limitedPod, freePod} {
		for _, dir := range pod.Dirs() {
			eventually(t, 30*time.Second, "cgroup "+dir+" removed", func() (bool, string) {
				_, err := os.Stat(dir)
				return errors.Is(err, fs.ErrNotExist), fmt.Sprintf("stat: %v", err)
			})
		}
	}
}

// replicaUID is the pod UID of the Deployment's one replica.
func replicaUID(t *testing.T, key types.NamespacedName) string {
	t.Helper()
	suite.rt.mu.Lock()
	defer suite.rt.mu.Unlock()
	st := suite.rt.deployments[key]
	if st == nil || len(st.replicas) != 1 {
		t.Fatalf("%s: want one replica", key)
	}
	return string(st.replicas[0].pod.UID)
}

// inCgroup checks that /proc/<pid>/cgroup puts the process in the
// container's cgroup of every controller.
func inCgroup(t *testing.T, pid int, pod *cgroups.Pod, container string) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for controller, dir := range pod.Dirs() {
		suffix := filepath.Join(filepath.Base(dir), container) // pod<uid>/<container>
		found := false
		for line := range strings.Lines(string(b)) {
			parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
			if len(parts) == 3 && (parts[1] == controller || strings.Contains(","+parts[1]+",", ","+controller+",")) {
				found = strings.HasSuffix(parts[2], "/"+suffix)
			}
		}
		if !found {
			t.Errorf("process %d is not in the %q cgroup %s:\n%s", pid, controller, suffix, b)
		}
	}
}

// seesItsOwnCgroup checks that the process of the unlimited replica (1 CPU
// limited, 125m requested) reads its own cgroup, read-only, where the
// hierarchies are mounted, as Knative's runtime conformance image reads it.
func seesItsOwnCgroup(t *testing.T, pid int, tree *cgroups.Tree) {
	t.Helper()
	want := map[string]string{"cpu/cpu.shares": "128", "cpu/cpu.cfs_quota_us": "100000", "cpu/cpu.cfs_period_us": "100000"}
	if tree.Unified() {
		want = map[string]string{"cpu.weight": "5", "cpu.max": "100000 100000", "memory.max": "max"}
	}
	root := "/proc/" + strconv.Itoa(pid) + "/root"
	for file, value := range want {
		controller, name, ok := strings.Cut(file, "/")
		if !ok {
			controller, name = "", file
		}
		path := filepath.Join(root, tree.MountPoint(controller), name)
		b, err := os.ReadFile(path)
		if got := strings.TrimSpace(string(b)); err != nil || got != value {
			t.Errorf("the replica reads %s = %q (%v), want %q", path, got, err, value)
		}
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			f.Close()
			t.Errorf("the replica can write %s", path)
		}
	}
}

// appOf is the app an image's container runs: pid is the runc that
// supervises it, and the app its only child (adopted by one of runc's
// threads: runc is the subreaper of the container's init).
func appOf(t *testing.T, pid int) int {
	t.Helper()
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		kids = append(kids, strings.Fields(string(b))...)
	}
	if len(kids) != 1 {
		t.Fatalf("runc %d has children %v, want the app alone", pid, kids)
	}
	app, _ := strconv.Atoi(kids[0])
	return app
}
