//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knitops/knit/internal/poll"
	"github.com/knitops/knit/local/runtime"
)

// launcherService runs its app through a shell, as `npm start` does: the
// app (sleep) is the shell's child, in an image's container, whose init
// runc supervises; a killed knit dev's runc dies, the container does not.
const launcherService = `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: launcher
  namespace: default
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/min-scale: "1"
    spec:
      containers:
        - image: %s
          command: ["/bin/sh", "-c", "sleep 3007; echo done"]
`

// appPIDs are the replicas' sleep 3007 processes.
func appPIDs(t *testing.T) []int {
	return replicaPIDs(t, func(argv []string) bool { return len(argv) == 2 && argv[0] == "sleep" && argv[1] == "3007" })
}

// replicaPIDs are the running processes of knit dev replicas (their
// environment holds the replica marker) whose argv matches, found as ps
// would.
func replicaPIDs(t *testing.T, match func(argv []string) bool) []int {
	t.Helper()
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range cmdlines {
		data, err := os.ReadFile(f)
		if err != nil || !match(strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(filepath.Dir(f), "environ"))
		if err != nil || !strings.Contains(string(env), runtime.ReplicaMarker+"=") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if running(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	return !strings.HasPrefix(strings.TrimSpace(s[strings.LastIndexByte(s, ')')+1:]), "Z")
}

// A knit dev killed with SIGKILL leaves the apps its replicas started
// through a launcher running; the next knit dev on the same state
// directory kills them before it starts anything, and a clean stop leaves
// nothing.
func TestKilledKnitDevLeavesNoOrphans(t *testing.T) {
	state := t.TempDir()
	d := startKnitDev(t, state)
	f := filepath.Join(t.TempDir(), "launcher.yaml")
	if err := os.WriteFile(f, []byte(fmt.Sprintf(launcherService, busyboxImage(t))), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := d.kubectl(t, "apply", "-f", f); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	var orphan int
	poll.Until(t, "the launcher's app running", 100*time.Millisecond, 2*time.Minute, func(context.Context) (bool, string) {
		pids := appPIDs(t)
		if len(pids) == 1 {
			orphan = pids[0]
		}
		return len(pids) == 1, strconv.Itoa(len(pids)) + " apps"
	})

	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.exited
	d.exited <- nil
	time.Sleep(200 * time.Millisecond) // the kernel's parent-death signals
	if !running(orphan) {
		t.Fatal("the app died with knit dev: the launcher case this test is about did not happen")
	}

	d = startKnitDev(t, state)
	if running(orphan) {
		t.Errorf("the app %d a killed knit dev left behind still runs after a restart", orphan)
	}
	if !strings.Contains(d.output.String(), "left running") {
		t.Errorf("knit dev does not say it killed a leftover process:\n%s", d.output)
	}
	if err := d.stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
	poll.Until(t, "no app left after a clean stop", 100*time.Millisecond, 10*time.Second, func(context.Context) (bool, string) {
		pids := appPIDs(t)
		return len(pids) == 0, strconv.Itoa(len(pids)) + " apps"
	})
}
