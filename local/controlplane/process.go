package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// stopTimeout bounds how long one child gets to exit after SIGTERM before
// it is killed.
const stopTimeout = 15 * time.Second

// process is one child (etcd or kube-apiserver) with its output in a log
// file. done closes when it has exited and been reaped.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error // valid once done is closed
}

// startProcess runs path with args, output appended to logPath.
//
// The child gets its own process group, so a Ctrl-C in knit's terminal
// reaches knit alone and knit stops the children in order; and, on Linux,
// a parent-death signal, so they die with knit even when knit is killed.
// That signal fires when the forking *thread* exits, so the fork happens
// on a goroutine locked to its thread until the child is gone.
func startProcess(name, path string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = childSysProcAttr()
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}

	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		logFile.Close() // the child holds its own copy
		started <- err
		if err != nil {
			return
		}
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("run %s: %w", path, err)
	}
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the child is gone.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError says that the child quit on its own and shows why, from the
// end of its log.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited early (%v); last lines of %s:\n%s", p.name, p.waitErr, p.logPath, logTail(p.logPath, 20))
}

// stop sends SIGTERM to the child's process group, waits up to timeout,
// then kills it. Stopping an exited child is a no-op.
func (p *process) stop(timeout time.Duration) error {
	if p.exited() {
		return nil
	}
	// ESRCH: it exited on its own just now; done closes in a moment.
	if err := syscall.Kill(-p.pid(), syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	<-p.done // SIGKILL cannot be ignored; Wait returns promptly
	return fmt.Errorf("%s did not stop within %s after SIGTERM and was killed", p.name, timeout)
}

// logTail returns up to the last n lines of a log file, for error messages.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	const window = 8 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > window {
		if _, err := f.Seek(-window, io.SeekEnd); err != nil {
			return fmt.Sprintf("(cannot read log: %v)", err)
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	data = bytes.TrimRight(data, "\n")
	if len(data) == 0 {
		return "  (log is empty)"
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}
