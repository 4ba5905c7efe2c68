package runtime

import (
	"context"
	"fmt"
	"github.com/go-logr/logr"
	"os"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/podlogs"
	"github.com/knitops/knit/local/probes"
	"github.com/knitops/knit/local/view"
)

// launch is everything needed to start a container's process.
type launch struct {
	argv   []string
	env    []string
	dir    string
	mounts *view.Plan // nil: it mounts no volume
	// cred is the user it runs as (containerCredential); nil: knit dev's.
	cred *syscall.Credential
	// image binds the binary of the container's image where the image
	// has it, for a user who cannot reach it where knit dev keeps it.
	image *view.Mount
	// oci, when set, runs the container's image through the engine:
	// argv, env and dir are then the container's own, inside the image.
	oci *ociLaunch
	// limits bound a process of knit dev's own making (processPrivileges),
	// where containers get views of their own.
	limits *view.Privileges
	// etc binds the pod's /etc/hosts and resolv.conf over this machine's
	// for a process of knit dev's own making, where the pod makes them its
	// own (processEtcMounts).
	etc []view.Mount
}

// runContainer is one container's life: set up (build the image, make
// the environment), then start the process, probe it, and restart it with
// backoff whenever it exits, until ctx ends and it is stopped gracefully.
// An init container's life is the same but for its end: its first run
// that exits 0 completes it (completed is then true; false when ctx ended
// first), and it has no probes.
func (r *replica) runContainer(ctx context.Context, ref containerRef) (completed bool) {
	c := r.containerSpec(ref)
	log := r.log.WithValues("container", c.Name)
	if ref.init {
		log = log.WithValues("init", true)
	}
	logPath := r.logPath(c.Name)
	logFile, err := openLog(logPath)
	if err != nil {
		r.holdBack(ctx, ref, c, fmt.Errorf("log: %w", err))
		return false
	}
	defer logFile.Close()
	stamped := podlogs.NewFile(logFile)
	if r.netErr != nil {
		r.holdBack(ctx, ref, c, r.netErr)
		return false
	}

	l, ok := r.setUp(ctx, ref, c)
	if !ok {
		return false
	}
	cg, err := r.containerCgroup(c)
	if err != nil {
		r.holdBack(ctx, ref, c, err)
		return false
	}
	defer func() {
		if err := cg.Remove(); err != nil {
			log.Error(err, "Container cgroup not removed")
		}
	}()
	if l.oci == nil {
		l.mounts = r.containerView(c, l, cg)
	}
	backoff := r.rt.opts.Backoff
	stdout, stderr := &tail{}, &tail{}
	streak := 0
	for {
		stdout.Reset()
		stderr.Reset()
		oomBefore := cg.OOMKills()
		logFrom := logSize(logFile)
		p, run, err := r.startRun(ctx, c, l, output{log: stamped, stdout: stdout, stderr: stderr}, cg)
		if err != nil {
			streak++
			log.Info("Container cannot start", "error", err.Error())
			r.update(ref, func(s *containerState) { s.setup = startFailure(c, err) })
			if !sleepCtx(ctx, backoff.Delay(streak)) {
				return false
			}
			continue
		}
		log.V(1).Info("Container started", "pid", p.pid(), "command", l.argv, "log", logPath)
		r.update(ref, func(s *containerState) {
			if s.lastExit != "" {
				s.restarts++
			}
			s.setup, s.running, s.pid, s.startedAt, s.probe = nil, true, p.pid(), p.started, ""
			s.log.started(logFrom)
			// A running init container is not ready: the kubelet calls it
			// ready once it has completed (complete).
			s.ready = c.ReadinessProbe == nil && !ref.init
			s.imageID, s.containerID = run.imageID(l), run.containerID()
		})
		if c.ReadinessProbe != nil && !ref.init {
			r.probe(ctx, ref.i, c, p, l)
		}
		unhealthy, live := "", r.watchLiveness(ctx, c, p, l)
		if restartedAfterCrash := streak > 0; restartedAfterCrash {
			// The crash stops being reported after crashVisibleFor; look again then.
			time.AfterFunc(crashVisibleFor, func() { r.rt.replicaChanged(r.key) })
		}

		select {
		case <-p.done:
		case unhealthy = <-live:
			r.killUnhealthy(c, p, l, unhealthy, log)
		case <-ctx.Done():
			grace, began := r.gracePeriod(), time.Now()
			r.preStop(c, l, grace, log)
			p.stop(max(grace-time.Since(began), 0), r.rt.killed)
			exit := exitOf(p, c, cg.OOMKills() > oomBefore, nil)
			r.teardownOCI(run)
			r.update(ref, func(s *containerState) {
				s.running, s.ready, s.pid = false, false, 0
				s.recordExit(exit)
			})
			return false
		}
		oomed := cg.OOMKills() > oomBefore // before teardown removes an image's cgroup
		r.teardownOCI(run)
		if ref.init && unhealthy == "" && !oomed && p.succeeded() {
			r.update(ref, func(s *containerState) { s.complete(exitOf(p, c, false, nil)) })
			log.Info("Init container completed", "ran", time.Since(p.started).Round(time.Millisecond), "log", logPath)
			return true
		}
		desc := describeExit(cg, p, oomed)
		streak = backoff.crashesInARow(streak, time.Since(p.started))
		lines := stderr.Lines()
		if len(lines) == 0 {
			lines = stdout.Lines()
		}
		if unhealthy != "" {
			desc = killedForLiveness(unhealthy)
		}
		delay := backoff.Delay(streak)
		log.Info("Container exited; restarting with backoff", "exit", desc, "backoff", delay, "log", logPath)
		exit := exitOf(p, c, oomed, lines)
		r.update(ref, func(s *containerState) {
			s.running, s.ready, s.pid, s.lastExit, s.lastLines = false, false, 0, desc, lines
			s.recordExit(exit)
		})
		if !sleepCtx(ctx, delay) {
			return false
		}
	}
}

// holdBack reports err, which keeps the container from running (its log
// file, the replica's network or its cgroup could not be made), until
// ctx ends.
func (r *replica) holdBack(ctx context.Context, ref containerRef, c *corev1.Container, err error) {
	r.log.Info("Container cannot run", "container", c.Name, "error", err.Error())
	r.update(ref, func(s *containerState) {
		s.setup = &failure{Reason: ReasonRunContainerError, Message: fmt.Sprintf("container %s: %v", c.Name, err)}
	})
	<-ctx.Done()
}

// setUp resolves what the container runs, retrying with backoff: a build
// can be fixed and a missing ConfigMap created while it waits. An image
// that cannot run, or volumes this machine cannot mount, are final for
// this pod template. ok is false when ctx
// ended first.
func (r *replica) setUp(ctx context.Context, ref containerRef, c *corev1.Container) (l launch, ok bool) {
	for attempt := 1; ; attempt++ {
		f := r.resolve(ctx, c, &l, attempt)
		if f == nil {
			r.update(ref, func(s *containerState) { s.setup = nil })
			return l, true
		}
		if ctx.Err() != nil {
			return l, false
		}
		r.log.Info("Container cannot be set up", "container", c.Name, "reason", f.Reason, "message", f.Message)
		r.update(ref, func(s *containerState) { s.setup = f })
		if f.final() {
			<-ctx.Done()
			return l, false
		}
		if !sleepCtx(ctx, r.rt.opts.Backoff.Delay(attempt)) {
			return l, false
		}
	}
}

// resolve fills l: environment, volumes (written for the replica on
// first use), command (building the image if needed), working
// directory and the user it runs as.
func (r *replica) resolve(ctx context.Context, c *corev1.Container, l *launch, attempt int) *failure {
	env, err := containerEnv(ctx, r.rt.reader, r.pod, c, r.ports)
	if err != nil {
		return &failure{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf("container %s: %v", c.Name, err)}
	}
	mounts, f := r.mountsFor(ctx, c, env)
	if f != nil {
		return f
	}
	if ociImage(c) {
		return r.resolveOCI(ctx, c, env, mounts, l, attempt)
	}
	moduleDir, f := r.rt.moduleDir(ctx, r.pod)
	if f != nil {
		return f
	}
	argv, f := r.rt.command(ctx, r.pins, moduleDir, c, env)
	if f != nil {
		return f
	}
	dir, f := r.rt.workingDir(moduleDir, c)
	if f != nil {
		return f
	}
	l.argv, l.env, l.dir, l.mounts = argv, append(processEnv(r.rt.opts.HostEnv, r.pod, r.net, env), ReplicaMarker+"="+r.rt.instance), dir, mounts
	bindKoApp(c, l)
	if l.limits, f = processPrivileges(c); f != nil {
		return f
	}
	if l.etc, f = r.processEtcMounts(c); f != nil {
		return f
	}
	return r.runAs(c, env, l)
}

// proberWhile is a prober of probe for container c's process p, exec
// probes run in p's view as its user, and a context that ends with p (or
// ctx): what a readiness or liveness probe runs under.
func (r *replica) proberWhile(ctx context.Context, probe *corev1.Probe, c *corev1.Container, p *process, l launch) (context.Context, *probes.Prober) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		<-p.done
		cancel()
	}()
	return ctx, probes.New(probe, r.probeTarget(c, r.execFor(c, p.pid(), l)))
}

// probe runs the container's readiness probe for as long as p runs.
func (r *replica) probe(ctx context.Context, i int, c *corev1.Container, p *process, l launch) {
	ctx, pr := r.proberWhile(ctx, c.ReadinessProbe, c, p, l)
	go pr.Readiness(ctx, p.started, func(ready bool, failing string) {
		msg := r.explainProbeFailure(failing) // a container on the wrong port, if one is (misbound.go)
		r.update(regular(i), func(s *containerState) {
			if s.pid == p.pid() {
				s.ready, s.probe = ready, msg
			}
		})
		if msg != "" && msg == failing {
			go r.explainLater(ctx, i, p.pid(), failing)
		}
	})
}

// logSize is where the next run's output begins in the log file.
func logSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// preStop runs the container's preStop hook before it is sent SIGTERM,
// within the grace period, as the kubelet does. Knative's hook on the app
// waits for the queue-proxy to drain, so the app keeps serving the
// requests the queue-proxy still holds.
func (r *replica) preStop(c *corev1.Container, l launch, budget time.Duration, log logr.Logger) {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	go func() {
		select {
		case <-r.rt.killed: // shutdown ran out of time: no more grace
			cancel()
		case <-ctx.Done():
		}
	}()
	h := c.Lifecycle.PreStop
	exec := r.execFor(c, r.pidOf(c), l)
	var err error
	switch {
	case h.HTTPGet != nil:
		err = probes.New(nil, r.probeTarget(c, exec)).HTTPGet(ctx, h.HTTPGet)
	case h.Exec != nil:
		err = exec.run(ctx, h.Exec.Command)
	case h.Sleep != nil:
		sleepCtx(ctx, time.Duration(h.Sleep.Seconds)*time.Second)
	}
	if err != nil {
		log.Info("PreStop hook failed", "error", err.Error())
	}
}
