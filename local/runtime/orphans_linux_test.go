package runtime

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A replica started through a launcher (sh -c 'app; echo', as npm start
// does) leaves its app behind when knit dev is killed: the launcher dies
// with knit dev, the app does not. The next knit dev on the same state
// directory must kill it, and nothing else.
func TestReapOrphansKillsWhatAKilledKnitDevLeft(t *testing.T) {
	launch := func(id string) (launcher *exec.Cmd, app int) {
		t.Helper()
		cmd := exec.Command("sh", "-c", "sleep 300 & echo $!; wait; echo")
		cmd.Env = append(os.Environ(), ReplicaMarker+"="+id)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 32)
		n, _ := out.Read(buf)
		pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
		if err != nil {
			t.Fatalf("the launcher printed %q", buf[:n])
		}
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
		return cmd, pid
	}
	ours, app := launch("state-a")
	_, other := launch("state-b")
	// knit dev is killed: its parent-death signal kills the launcher only.
	if err := ours.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = ours.Wait()
	if !alive(app) {
		t.Fatal("the app died with its launcher; nothing to reap")
	}

	reaped, err := reapOrphans("state-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(reaped) != 1 || reaped[0].pid != app || reaped[0].command == "" {
		t.Errorf("reaped %+v, want the app (pid %d)", reaped, app)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(app) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(app) {
		t.Error("the orphaned app still runs")
	}
	if !alive(other) {
		t.Error("another state directory's replica was killed")
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

func TestProcessGroupReadsCommandsWithParens(t *testing.T) {
	pgid, command, err := processGroup(os.Getpid())
	if err != nil || pgid != syscall.Getpgrp() || command == "" {
		t.Errorf("processGroup(self) = %d %q %v, want %d", pgid, command, err, syscall.Getpgrp())
	}
}
