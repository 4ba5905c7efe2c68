package cgroups

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/knitops/knit/internal/poll"
)

// A container's process is born in its cgroup (v1: forked from a thread
// that joined it and left; v2: CLONE_INTO_CGROUP), knit dev's threads all
// stay in knit dev's own, and what the process started outside its
// process group dies with it (Kill), also when the container sees its
// cgroup (a mount namespace of its own, where the forking thread stays).
// Run on this machine's hierarchies, and on a hybrid machine's unified one
// too (no controllers there, but the same placement); not root, there are
// none and OpenTree says why.
func TestContainerProcessIsBornInItsCgroup(t *testing.T) {
	trees := map[string]*Tree{}
	tree, err := OpenTree("test-"+rand.String(6), 2048)
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
				if err := tree.Close(); err != nil {
					t.Error(err)
				}
			}()
			pod := tree.Pod(rand.String(8))
			cg, err := pod.Container("app", Limits{Memory: 64 << 20, CPUShares: 2})
			if err != nil {
				t.Fatal(err)
			}
			pidFile := filepath.Join(t.TempDir(), "escaped")
			script := "setsid sleep 300 & echo $! > " + pidFile + "; exec sleep 300"
			cmd := exec.Command("/bin/sh", "-c", script)
			cmd.Env, cmd.Dir = []string{"PATH=/usr/bin:/bin"}, "/"
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			// As a replica's container has it, where it can: seeing its
			// own cgroup.
			if err := startIn(cmd, cg, os.Geteuid() == 0); err != nil {
				t.Fatal(err)
			}
			checkIn(t, strconv.Itoa(cmd.Process.Pid), tree, cg.dirs)
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

			// The container is over, as the runtime ends it: its process
			// group killed, then whatever is left in its cgroup.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			cg.Kill()
			poll.Until(t, "the escaped sleep killed", 20*time.Millisecond, 10*time.Second, func(_ context.Context) (bool, string) {
				stat, err := os.ReadFile("/proc/" + strconv.Itoa(escaped) + "/stat")
				return err != nil || bytes.Contains(stat, []byte(") Z ")), string(stat)
			})
			if err := cg.Remove(); err != nil {
				t.Fatal(err)
			}
			if err := pod.Remove(); err != nil {
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

// startIn starts cmd in cg as the runtime starts a container's process,
// forked from a thread locked to its goroutine that entered the cgroup
// (Enter) and leaves it after. With view the thread first unshares a
// mount namespace in which the container's cgroup is bound read-only
// where its hierarchy is mounted (View), as the runtime's container view
// binds it; the thread never leaves it and dies with its goroutine.
func startIn(cmd *exec.Cmd, cg *Container, view bool) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		stuck, err := view, error(nil)
		if view {
			err = bindView(cg.View())
		}
		if err == nil {
			var leave func() bool
			leave, err = cg.Enter(cmd)
			if err == nil {
				err = cmd.Start()
			}
			stuck = leave() || stuck
		}
		if !stuck {
			runtime.UnlockOSThread()
		}
		started <- err
	}()
	return <-started
}

// bindView gives the calling thread a mount namespace of its own with
// mounts bound read-only.
func bindView(mounts []Mount) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	for _, m := range mounts {
		if err := unix.Mount(m.Source, m.Target, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s: %w", m.Source, err)
		}
		if err := unix.Mount("", m.Target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("bind %s read-only: %w", m.Source, err)
		}
	}
	return nil
}

// unifiedBeside is a tree in a hybrid machine's unified hierarchy, where
// this process is at the root; nil on other machines.
func unifiedBeside(t *testing.T, tree *Tree) *Tree {
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
	return &Tree{v2: true, own: map[string]string{"": unified}, roots: map[string]string{"": root}}
}

// cgroupOf is the cgroup path /proc/<proc>/cgroup gives for the
// controller ("" for v2's line).
func cgroupOf(t *testing.T, proc, controller string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + proc + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	return cgroupIn(t, proc, b, controller)
}

// cgroupIn is controller's cgroup in proc's /proc/<proc>/cgroup, b.
func cgroupIn(t *testing.T, proc string, b []byte, controller string) string {
	t.Helper()
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
// the tree's hierarchies, one per controller. A thread of this process
// ("self/task/<tid>") may end between its listing and this read — the Go
// runtime's threads come and go — and is then skipped.
func checkIn(t *testing.T, proc string, tree *Tree, dirs map[string]string) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + proc + "/cgroup")
	if errors.Is(err, fs.ErrNotExist) && strings.HasPrefix(proc, "self/task/") {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for controller, dir := range dirs {
		rel, err := filepath.Rel(tree.own[controller], dir)
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(cgroupOf(t, "self", controller), rel)
		if got := cgroupIn(t, proc, b, controller); got != want {
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
