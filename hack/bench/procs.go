package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// Paths through proxies that run as processes of their own, as a
// queue-proxy runs beside its app in a pod: knit's knit-queue, Knative's
// queue-proxy and the pooled bare proxy. They share the in-process app
// and load generator with every other path.
const (
	pathProcBare        = "proc-bare-pooled"
	pathProcKnitCC0     = "proc-knit-cc0"
	pathProcKnativeCC0  = "proc-knative-cc0"
	pathProcKnitCC10    = "proc-knit-cc10"
	pathProcKnativeCC10 = "proc-knative-cc10"
	// pathProcKnitCC0NoFast is knit-queue at cc=0 with its HTTP/1 fast
	// path off (QUEUE_DISABLE_FAST_PATH): every request through its
	// ReverseProxy, so the fast path's gain shows on its own. The fast
	// path does not depend on the breaker, so cc=0 alone is measured.
	pathProcKnitCC0NoFast = "proc-knit-cc0-nofast"
)

// Time limits of the process paths; none is reached when things work.
const (
	procReadyTimeout = 10 * time.Second
	// memSettle is the quiet before a process's memory is read.
	memSettle = time.Second
)

// proxyProc is one proxy process.
type proxyProc struct {
	path    path
	cmd     *exec.Cmd
	logPath string
	exited  chan error
	// bin is the executable, whose size the memory table shows.
	bin string
	// probe is the header of a readiness check the proxy answers itself;
	// nil for the bare proxy, which is ready when the app answers.
	probe http.Header
}

// procMemory is what one proxy process held, idle after its start and
// idle again after the whole load.
type procMemory struct {
	path          path
	binBytes      int64
	start, loaded memUsage
}

// start runs the process with its output in dir and waits until it
// answers: its own readiness check if it has one, then a GET of the app.
func (p *proxyProc) start(ctx context.Context, dir string) error {
	p.logPath = filepath.Join(dir, p.path.name+".log")
	log, err := os.Create(p.logPath)
	if err != nil {
		return err
	}
	defer log.Close() // the child holds its own descriptor
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.SysProcAttr = proxySysProcAttr()
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", p.path.label, err)
	}
	p.exited = make(chan error, 1)
	go func() { p.exited <- p.cmd.Wait() }()

	deadline := time.Now().Add(procReadyTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-p.exited:
			p.exited <- err
			return p.explain(fmt.Errorf("exited before it answered: %v", err))
		default:
		}
		if last = p.check(deadline); last == nil {
			return nil
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
	return p.explain(fmt.Errorf("not answering within %s: %w", procReadyTimeout, last))
}

// check sends the readiness check, if any, and one GET of the app.
func (p *proxyProc) check(deadline time.Time) error {
	if p.probe != nil {
		if err := get(p.path.url, p.path.host, p.probe, deadline); err != nil {
			return fmt.Errorf("readiness check: %w", err)
		}
	}
	return get(p.path.url, p.path.host, nil, deadline)
}

// get sends one GET with Host host (the URL's when empty) and wants 200.
func get(url, host string, header http.Header, deadline time.Time) error {
	req, err := queuebench.NewRequest(url, host, header)
	if err != nil {
		return err
	}
	c := queuebench.NewConn(req, deadline)
	defer c.Close()
	return c.Do()
}

// stop kills the process: nothing it would do on SIGTERM is measured,
// and Knative's queue-proxy drains for 30 s.
func (p *proxyProc) stop() {
	if p.cmd.Process == nil || p.exited == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	err := <-p.exited
	p.exited <- err
}

// memory reads the process's memory now.
func (p *proxyProc) memory() (memUsage, error) {
	select {
	case err := <-p.exited:
		p.exited <- err
		return memUsage{}, p.explain(fmt.Errorf("exited: %v", err))
	default:
	}
	return readMemUsage(p.cmd.Process.Pid)
}

// cpuMeter returns a queuebench Measure hook adding the CPU time the
// process spends during a measured run to *total; it adds nothing when
// the time cannot be read (not Linux).
func (p *proxyProc) cpuMeter(total *time.Duration) func(start bool) {
	var before time.Duration
	var ok bool
	return func(start bool) {
		now, err := readCPU(p.cmd.Process.Pid)
		switch {
		case start:
			before, ok = now, err == nil
		case ok && err == nil:
			*total += now - before
		}
	}
}

// explain names the process and adds the end of its log to err.
func (p *proxyProc) explain(err error) error {
	data, _ := os.ReadFile(p.logPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return fmt.Errorf("%s: %w\n--- last lines of its log:\n%s", p.path.label, err, strings.Join(lines[max(0, len(lines)-20):], "\n"))
}

// startProcs starts every proxy process and reads their memory once all
// answer; on error it stops the ones it started.
func startProcs(ctx context.Context, procs []*proxyProc, dir string) ([]procMemory, error) {
	stopAll := func() {
		for _, p := range procs {
			p.stop()
		}
	}
	for _, p := range procs {
		if err := p.start(ctx, dir); err != nil {
			stopAll()
			return nil, err
		}
	}
	mem, err := readProcsMemory(ctx, procs, nil)
	if err != nil {
		stopAll()
		return nil, err
	}
	return mem, nil
}

// readProcsMemory waits memSettle and reads every process's memory, into
// the start column (mem nil) or the loaded one.
func readProcsMemory(ctx context.Context, procs []*proxyProc, mem []procMemory) ([]procMemory, error) {
	if err := sleep(ctx, memSettle); err != nil {
		return nil, err
	}
	first := mem == nil
	if first {
		mem = make([]procMemory, len(procs))
	}
	var errs []error
	for i, p := range procs {
		u, err := p.memory()
		if errors.Is(err, errNoProc) {
			u = memUsage{} // not Linux: the table says so
		} else if err != nil {
			errs = append(errs, err)
			continue
		}
		if first {
			mem[i] = procMemory{path: p.path, binBytes: fileSize(p.bin), start: u}
		} else {
			mem[i].loaded = u
		}
	}
	return mem, errors.Join(errs...)
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}
