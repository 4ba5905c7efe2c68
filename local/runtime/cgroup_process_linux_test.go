//go:build !unit

package runtime

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/knitops/knit/internal/poll"
)

// A container's process is born in its cgroup (v1: forked from a thread
// that joined it and left; v2: CLONE_INTO_CGROUP), knit dev's threads all
// stay in knit dev's own, and what the process started outside its
// process group dies with it, also when the container sees its cgroup
// (a mount namespace of its own, where the forking thread stays). Run on this machine's hierarchies, and on a
// hybrid machine's unified one too (no controllers there, but the same
// placement); not root, there are none and the runtime says why.
func TestContainerProcessIsBornInItsCgroup(t *testing.T) {
	trees := map[string]*cgroupTree{}
	tree, err := openCgroupTree("test-"+rand.String(6), 2048)
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("no cgroups as root: %v", err)
		}
		return
	}
	trees["this machine's"] = tree
	// The whole tree weighs as the kubelet's kubepods: 1024 shares a CPU.
	if root, ok := tree.roots["cpu"]; ok && !tree.v2 {
		if b, err := os.ReadFile(filepath.Join(root, "cpu.shares")); err != nil || strings.TrimSpace(string(b)) != "2048" {
			t.Errorf("tree cpu.shares = %q, %v; want 2048", b, err)
		}
	} else if tree.v2 && slices.Contains(tree.controllers, "cpu") {
		if b, err := os.ReadFile(filepath.Join(tree.roots[""], "cpu.weight")); err != nil || strings.TrimSpace(string(b)) != strconv.FormatInt(sharesToWeight(2048), 10) {
			t.Errorf("tree cpu.weight = %q, %v; want %d", b, err, sharesToWeight(2048))
		}
	}
	if unified := unifiedBeside(t, tree); unified != nil {
		trees["hybrid's unified"] = unified
	}
	for name, tree := range trees {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if err := tree.close(); err != nil {
					t.Error(err)
				}
			}()
			pod := tree.pod(rand.String(8))
			cg, err := pod.container("app", limits{memory: 64 << 20, cpuShares: 2})
			if err != nil {
				t.Fatal(err)
			}
			pidFile := filepath.Join(t.TempDir(), "escaped")
			script := "setsid sleep 300 & echo $! > " + pidFile + "; exec sleep 300"
			var view *mountPlan // as a replica's container has it, where it can
			if mountSupport() == nil {
				view = &mountPlan{scratch: t.TempDir(), mounts: cg.view()}
			}
			p, err := startProcess([]string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, "/",
				output{log: io.Discard, stdout: io.Discard, stderr: io.Discard}, nil, cg, view, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkIn(t, strconv.Itoa(p.pid()), tree, cg.dirs)
			for _, tid := range threads(t) {
				checkIn(t, "self/task/"+tid, tree, tree.own)
			}
			var escaped int
			poll.Until(t, "the escaped sleep's pid", 20*time.Millisecond, 10*time.Second, func(_ context.Context) (bool, string) {
				b, _ := os.ReadFile(pidFile)
				escaped, err = strconv.Atoi(strings.TrimSpace(string(b)))
				return err == nil, string(b)
			})
			checkIn(t, strconv.Itoa(escaped), tree, cg.dirs)

			p.stop(0, nil)
			poll.Until(t, "the escaped sleep killed", 20*time.Millisecond, 10*time.Second, func(_ context.Context) (bool, string) {
				stat, err := os.ReadFile("/proc/" + strconv.Itoa(escaped) + "/stat")
				return err != nil || bytes.Contains(stat, []byte(") Z ")), string(stat)
			})
			if err := cg.remove(); err != nil {
				t.Fatal(err)
			}
			if err := pod.remove(); err != nil {
				t.Fatal(err)
			}
			for _, dir := range pod.dirs {
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("cgroup %s still there: %v", dir, err)
				}
			}
		})
	}
}

// unifiedBeside is a tree in a hybrid machine's unified hierarchy, where
// this process is at the root; nil on other machines.
func unifiedBeside(t *testing.T, tree *cgroupTree) *cgroupTree {
	t.Helper()
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	const unified = "/sys/fs/cgroup/unified"
	if tree.v2 || !strings.Contains(string(b), "\n0::/\n") {
		return nil
	}
	if _, err := os.Stat(filepath.Join(unified, "cgroup.procs")); err != nil {
		return nil
	}
	root := filepath.Join(unified, "knit-test-"+rand.String(6))
	if err := mkdirCgroup(root); err != nil {
		t.Fatal(err)
	}
	return &cgroupTree{v2: true, own: map[string]string{"": unified}, roots: map[string]string{"": root}}
}

// cgroupOf is the cgroup path /proc/<proc>/cgroup gives for the
// controller ("" for v2's line).
func cgroupOf(t *testing.T, proc, controller string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + proc + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) == 3 && (parts[0] == "0") == (controller == "") && slices.Contains(strings.Split(parts[1], ","), controller) {
			return parts[2]
		}
	}
	t.Fatalf("/proc/%s/cgroup has no %q line:\n%s", proc, controller, b)
	return ""
}

// checkIn checks that a process (or thread) is in the cgroups dirs of
// the tree's hierarchies, one per controller.
func checkIn(t *testing.T, proc string, tree *cgroupTree, dirs map[string]string) {
	t.Helper()
	for controller, dir := range dirs {
		rel, err := filepath.Rel(tree.own[controller], dir)
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(cgroupOf(t, "self", controller), rel)
		if got := cgroupOf(t, proc, controller); got != want {
			t.Errorf("%s is in the %q cgroup %s, want %s", proc, controller, got, want)
		}
	}
}

func threads(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var tids []string
	for _, e := range entries {
		tids = append(tids, e.Name())
	}
	return tids
}
