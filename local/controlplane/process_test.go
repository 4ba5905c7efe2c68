package controlplane

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeBinDir holds shell scripts named like the real binaries, so Start's
// failure paths run real processes without a real control plane.
func fakeBinDir(t *testing.T, etcdScript string) string {
	t.Helper()
	dir := t.TempDir()
	for name, script := range map[string]string{"etcd": etcdScript, "kube-apiserver": "exit 1", "kube-controller-manager": "exit 1"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestStartReportsEarlyExitWithLogTail(t *testing.T) {
	bin := fakeBinDir(t, `echo "listen tcp: address already in use" >&2; exit 3`)
	_, err := Start(context.Background(), Options{StateDir: t.TempDir(), BinDir: bin})
	if err == nil {
		t.Fatal("Start succeeded with an etcd that exits at once")
	}
	for _, want := range []string{"start etcd", "exited early", "exit status 3", "address already in use", "etcd.log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

func TestStartStopsWhatItStartedOnTimeout(t *testing.T) {
	// An etcd that never answers: Start must give up at its deadline and
	// kill it rather than leave it running.
	pidFile := filepath.Join(t.TempDir(), "pid")
	bin := fakeBinDir(t, `echo $$ > `+pidFile+`; exec sleep 300`)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, Options{StateDir: t.TempDir(), BinDir: bin})
	if err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("Start = %v, want a not-ready error", err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("fake etcd never ran: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	assertGone(t, "etcd", pid)
}

func TestValidateNamesMissingBinary(t *testing.T) {
	opts := Options{StateDir: t.TempDir(), BinDir: "no-such-bin"}
	err := opts.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bin dir without binaries")
	}
	if want := "kube-apiserver not found in ./no-such-bin: run `make tools`"; err.Error() != want {
		t.Errorf("Validate = %q, want %q", err, want)
	}
}

// assertGone fails unless no process has pid any more. Start and Stop reap
// their children, so a pid that answers signal 0 is one of ours still running.
func assertGone(t *testing.T, name string, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Errorf("%s (pid %d) is still there after stop: kill(pid, 0) = %v", name, pid, err)
	}
}
