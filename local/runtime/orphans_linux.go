package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// orphan is a process a replica of an earlier knit dev left behind.
type orphan struct {
	pid, pgid int
	command   string
}

// findOrphans lists the processes whose environment carries marker=id,
// reading /proc (as ps would); the caller's own process group is never
// one of them.
func findOrphans(id string) ([]orphan, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	want := []byte(ReplicaMarker + "=" + id)
	self := syscall.Getpgrp()
	var out []orphan
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !hasEntry(env, want) {
			continue // gone, or not ours to read: not a replica of this user's knit dev
		}
		pgid, command, err := processGroup(pid)
		if err != nil || pgid == self {
			continue
		}
		out = append(out, orphan{pid: pid, pgid: pgid, command: command})
	}
	return out, nil
}

// hasEntry reports whether a NUL-separated environment holds entry.
func hasEntry(environ, entry []byte) bool {
	for kv := range bytes.SplitSeq(environ, []byte{0}) {
		if bytes.Equal(kv, entry) {
			return true
		}
	}
	return false
}

// processGroup reads a process's group and command from /proc/<pid>/stat:
// "pid (comm) state ppid pgrp …", where comm may hold spaces and parens.
func processGroup(pid int) (int, string, error) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", err
	}
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return 0, "", errors.New("malformed stat")
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 3 {
		return 0, "", errors.New("malformed stat")
	}
	pgid, err := strconv.Atoi(fields[2])
	return pgid, string(stat[open+1 : end]), err
}

// reapOrphans kills the process groups of the orphans of state directory
// id, and each orphan itself (one that left its group with setsid is
// still found by its environment).
func reapOrphans(id string) ([]orphan, error) {
	orphans, err := findOrphans(id)
	if err != nil {
		return nil, err
	}
	for _, o := range orphans {
		_ = syscall.Kill(-o.pgid, syscall.SIGKILL)
		_ = syscall.Kill(o.pid, syscall.SIGKILL)
	}
	return orphans, nil
}
