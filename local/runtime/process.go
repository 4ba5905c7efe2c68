package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/knitops/knit/local/cgroups"
	"github.com/knitops/knit/local/podlogs"
	"github.com/knitops/knit/local/view"
)

// drainTimeout bounds how long output is read after a process exits, in
// case something it started escaped its process group and holds the pipes.
const drainTimeout = time.Second

// process is one run of a container's command.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{} // closed once it has exited, been reaped and its output drained
	state   *os.ProcessState
}

// output is where a process's streams go: the log file, and tails kept
// for condition messages.
type output struct {
	log            *podlogs.File // each line stamped with its time, for kubectl logs
	stdout, stderr io.Writer
}

// startProcess runs argv with exactly env, in dir, in the replica's
// network.
//
// The process gets its own process group, so that a stop reaches all it
// started, and on Linux a parent-death signal, so that nothing outlives
// knit dev even when knit dev is killed. That signal fires when the forking
// *thread* exits, so the fork happens on a goroutine that keeps its thread
// until the process is gone (it would sit in wait anyway); the same thread
// steps into an isolated replica's network namespace for the fork, and
// the child is born in the container's cgroup (cg; nil: none). A
// container that mounts volumes is forked from a thread that first made
// the container's own mount namespace (view.Plan.Enter); that thread never
// serves another goroutine. cred, when set, is the user the process runs
// as (the kernel checks its exec of path and its chdir into dir as that
// user).
func startProcess(argv, env []string, dir string, out output, net *podNetwork, cg *cgroups.Container, mounts *view.Plan, cred *syscall.Credential) (*process, error) {
	path, err := lookPath(argv[0], env, dir)
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Dir: dir, Stdout: outW, Stderr: errW, SysProcAttr: childSysProcAttr()}
	cmd.SysProcAttr.Credential = cred
	p := &process{cmd: cmd, done: make(chan struct{})}

	started := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		stuck, err := mounts.Enter()
		if err == nil {
			var inStuck bool
			inStuck, err = startIn(cmd, net, cg)
			stuck = stuck || inStuck
		}
		if !stuck { // else the thread, still in the replica's namespaces or cgroup, ends with this goroutine
			defer goruntime.UnlockOSThread()
		}
		outW.Close() // the child holds its own copies
		errW.Close()
		started <- err
		if err != nil {
			outR.Close()
			errR.Close()
			return
		}
		logOut, logErr := out.log.Stream(), out.log.Stream()
		var copying sync.WaitGroup
		copying.Go(func() { _, _ = io.Copy(io.MultiWriter(logOut, out.stdout), outR); _ = logOut.Close() })
		copying.Go(func() { _, _ = io.Copy(io.MultiWriter(logErr, out.stderr), errR); _ = logErr.Close() })
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		// The container is over: like the end of a container's cgroup,
		// nothing it started survives it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cg.Kill()
		drained := make(chan struct{})
		go func() { copying.Wait(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(drainTimeout):
		}
		outR.Close()
		errR.Close()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	p.started = time.Now()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, waits up to grace (or until
// kill closes), then SIGKILLs the group. It returns once the process is gone.
func (p *process) stop(grace time.Duration, kill <-chan struct{}) {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return
	case <-timer.C:
	case <-kill:
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	<-p.done
}

// exitDescription says how the process ended, for messages: "exited with
// code 1" or "was killed by signal killed". Valid once done is closed.
func (p *process) exitDescription() (desc string, code int) {
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %s", ws.Signal()), 128 + int(ws.Signal())
	}
	code = p.state.ExitCode()
	return fmt.Sprintf("exited with code %d", code), code
}

// succeeded reports a run that exited 0. Valid once done is closed.
func (p *process) succeeded() bool {
	_, code := p.exitDescription()
	return code == 0
}

// lookPath finds a command the way a container would, on the PATH of its
// own environment rather than knit dev's; a name with a slash is used as is
// (relative to dir when relative).
func lookPath(name string, env []string, dir string) (string, error) {
	if name == "" {
		return "", errors.New("empty command")
	}
	if strings.Contains(name, "/") {
		return name, nil
	}
	var pathList string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathList = v
		}
	}
	for _, d := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		candidate := filepath.Join(d, name)
		if fi, err := os.Stat(candidate); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}
