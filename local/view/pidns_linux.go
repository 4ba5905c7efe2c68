package view

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"syscall"
)

// pauseEnv, set to pauseValue, makes this binary the holder of a pod's
// PID namespace instead of itself (init, below): what the pause
// container is on a node.
const (
	pauseEnv   = "KNIT_RUNTIME_PAUSE"
	pauseValue = "pid-namespace"
)

// init turns a process started by OpenPIDNamespace into the namespace's
// holder before main runs. It is this package's own re-execution, with
// /proc/self/exe, so it works in every binary that links it (the
// runtime's): knit, and this package's and the runtime's tests.
func init() {
	if os.Getenv(pauseEnv) == pauseValue {
		pause()
	}
}

// pause is PID 1 of a pod's PID namespace, as the pause container is on
// a node with shareProcessNamespace: it holds the namespace for the
// replica's life, so a container that exits does not take the others'
// processes with it (the kernel kills a namespace's every process when
// its PID 1 ends), and reaps the processes orphaned to it. It ends on
// SIGTERM or SIGINT; knit dev kills it with SIGKILL.
func pause() {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reapChildren()
	}
}

// reapChildren waits for every child that has exited, without blocking.
func reapChildren() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// PIDNamespace is a replica's shared PID namespace (a pod's
// shareProcessNamespace), held by a pause process of its own (pause)
// for as long as the replica runs.
type PIDNamespace struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the holder has exited and been reaped
}

// OpenPIDNamespace starts a holder in a new PID namespace. Like every
// replica process it has its own process group, the replica marker
// (marker, NAME=value: package runtime's ReplicaMarker and instance), so
// that a knit dev killed before it leaves none behind (the runtime's
// reapOrphans), and a parent-death signal, which fires when the forking
// thread ends: the fork happens on a goroutine that keeps its thread
// until the holder is gone.
func OpenPIDNamespace(marker string) (*PIDNamespace, error) {
	h := &PIDNamespace{done: make(chan struct{})}
	h.cmd = &exec.Cmd{
		Path: "/proc/self/exe", Args: []string{"knit-pause"}, Dir: "/",
		Env: []string{pauseEnv + "=" + pauseValue, marker},
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: syscall.CLONE_NEWPID,
		},
	}
	started := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		defer goruntime.UnlockOSThread()
		err := h.cmd.Start()
		started <- err
		if err != nil {
			return
		}
		_ = h.cmd.Wait()
		close(h.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start the holder of a PID namespace: %w", err)
	}
	return h, nil
}

// Path is the namespace, for the OCI spec's PID namespace entry: a
// container joins it rather than get one of its own.
func (h *PIDNamespace) Path() string {
	return fmt.Sprintf("/proc/%d/ns/pid", h.cmd.Process.Pid)
}

// Alive reports the holder still running: a container joining a dead
// holder's namespace would fail to start with runc's words.
func (h *PIDNamespace) Alive() bool {
	select {
	case <-h.done:
		return false
	default:
		return true
	}
}

// Close kills the holder, and with it whatever is left in the namespace,
// and waits for it to be reaped.
func (h *PIDNamespace) Close() error {
	if h == nil {
		return nil
	}
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill the PID namespace's holder: %w", err)
	}
	<-h.done
	return nil
}
