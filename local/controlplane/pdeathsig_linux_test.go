//go:build !unit

package controlplane

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a stand-in for knit: start a
// control plane on the state dir it names, print the children's pids, hang.
const helperEnv = "KNIT_CONTROLPLANE_HELPER_STATE"

func TestHelperProcess(t *testing.T) {
	state := os.Getenv(helperEnv)
	if state == "" {
		t.Skip("helper for TestChildrenDieWithKnit")
	}
	cp, err := Start(context.Background(), Options{StateDir: state, BinDir: os.Getenv("KUBEBUILDER_ASSETS")})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("pids", cp.etcd.pid(), cp.apiserver.pid())
	select {}
}

// TestChildrenDieWithKnit kills "knit" with SIGKILL, so it cannot stop
// anything itself, and expects the kernel to take etcd and kube-apiserver
// down with it.
func TestChildrenDieWithKnit(t *testing.T) {
	bin := binDir(t)
	// Orphans are adopted by the nearest subreaper; make that this test, so
	// it can reap them instead of leaving zombies where init does not.
	if err := setChildSubreaper(1); err != nil {
		t.Fatalf("become subreaper: %v", err)
	}
	t.Cleanup(func() { _ = setChildSubreaper(0) })

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+t.TempDir(), "KUBEBUILDER_ASSETS="+bin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("helper said nothing: %v", err)
	}
	var etcdPID, apiPID int
	if _, err := fmt.Sscanf(line, "pids %d %d", &etcdPID, &apiPID); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("helper: %s", strings.TrimSpace(line))
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("kill helper: %v", err)
	}
	_ = cmd.Wait()

	deadline := time.Now().Add(10 * time.Second)
	for name, pid := range map[string]int{"etcd": etcdPID, "kube-apiserver": apiPID} {
		if !reaped(pid, deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			reaped(pid, time.Now().Add(5*time.Second))
			t.Errorf("%s (pid %d) outlived the process that started it", name, pid)
		}
	}
}

// setChildSubreaper is prctl(PR_SET_CHILD_SUBREAPER, on).
func setChildSubreaper(on uintptr) error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, on, 0); errno != 0 {
		return errno
	}
	return nil
}

// reaped waits until the adopted orphan pid has exited and reaps it.
func reaped(pid int, deadline time.Time) bool {
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid || (err == syscall.ECHILD && !alive(pid)) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// alive reports whether pid runs; an orphan that died but was not yet
// reaped by init is a zombie and counts as dead.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
