package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/local/cgroups"
	"github.com/knitops/knit/local/nodefit"
	"github.com/knitops/knit/local/view"
)

// crashVisibleFor is how long a restarted container must run and be
// ready before its crash stops being reported, so that a crash loop reads
// as one steady CrashLoopBackOff rather than flickering with each restart.
const crashVisibleFor = 10 * time.Second

// replica is one pod's worth of processes: one per container, sharing a
// network (and a set of ports in it), started together (after its init
// containers, one at a time, have completed) and stopped together.
type replica struct {
	rt      *Runtime
	key     types.NamespacedName // the Deployment
	id      string
	pod     podIdentity
	hash    string // the pod template it runs
	spec    *corev1.PodSpec
	ports   portMap
	pins    *imagePins
	created time.Time
	log     logr.Logger
	cancel  context.CancelFunc
	done    chan struct{}

	mu          sync.Mutex
	terminating bool
	containers  []containerState // by index in spec.Containers
	inits       []containerState // by index in spec.InitContainers
	readySince  time.Time
	// net is set once, before any container starts; netErr says why it
	// could not be made.
	net    *podNetwork
	netErr error
	cgroup *cgroups.Pod // set before any container starts; nil without cgroups
	// pidNS is the PID namespace the containers of images join, set by
	// openSandbox before any starts when the pod shares its process
	// namespace; nil otherwise.
	pidNS *view.PIDNamespace
	// askFirst makes admission a dry run whatever the namespace looks
	// like: a Pod of its template was refused before.
	askFirst bool
	// unschedulable is why the replica is not placed on this machine yet
	// (its claims, its node affinity or tolerations, its room), in the
	// scheduler's words; "" once placed.
	unschedulable string
	// volumes are written when the first container that mounts one is set up.
	volumes podVolumes
}

// containerState is what a replica knows of one of its containers.
type containerState struct {
	name      string
	init      bool     // an init container: it runs to completion, before the containers
	completed bool     // an init container whose run exited 0: it never runs again
	setup     *failure // why it cannot be started (build, image, env, exec)
	running   bool
	pid       int
	startedAt time.Time
	ready     bool
	probe     string // the readiness probe's failure, once it counts as one
	restarts  int
	lastExit  string   // "exited with code 1", once it has exited
	lastLines []string // the end of its output when it did
	// exit is how its process last ended (recordExit), prevExit the end
	// before that: the Pod's state and lastState.
	exit, prevExit *corev1.ContainerStateTerminated
	// imageID and containerID are what the Pod reports of an image's
	// run: repository@digest and runc://<id>.
	imageID, containerID string
	// log is where its runs' output is, for kubectl logs.
	log runLog
}

// replicaView is a replica at one instant: what Deployment status and
// EndpointSlices are computed from.
type replicaView struct {
	ID          string
	PodName     string
	Hash        string
	Labels      map[string]string
	Ports       portMap
	IP          string // "" until the replica has a network
	Created     time.Time
	Ready       bool
	ReadySince  time.Time
	Terminating bool
	Failure     *failure
}

// failure is what, if anything, the user must hear about this container.
func (c *containerState) failure(now time.Time) *failure {
	switch {
	case c.completed:
		return nil // its earlier failures are over
	case c.setup != nil:
		return c.setup
	case c.lastExit != "" && (!c.running || !c.ready && c.probe == "" || now.Sub(c.startedAt) < crashVisibleFor):
		// A container that runs again and whose readiness probe says why
		// it is not ready reads as that probe once the crash window is
		// over: the probe is what is wrong now.
		msg := fmt.Sprintf("%s %s %s (restarted %d times)", c.kind(), c.name, c.lastExit, c.restarts)
		if len(c.lastLines) > 0 {
			msg += ": " + strings.Join(c.lastLines, "\n")
		}
		return &failure{Reason: ReasonCrashLoopBackOff, Message: msg}
	case c.running && !c.ready && c.probe != "":
		return &failure{Reason: ReasonReadinessProbeFailed, Message: c.probe}
	}
	return nil
}

// kind is "init container" or "container", for messages.
func (c *containerState) kind() string {
	if c.init {
		return "init container"
	}
	return "container"
}

func (r *replica) view(now time.Time) replicaView {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := replicaView{
		ID: r.id, PodName: r.pod.Name, Hash: r.hash, Labels: r.pod.Labels, Ports: r.ports, Created: r.created,
		Ready: r.readyLocked(), ReadySince: r.readySince, Terminating: r.terminating,
	}
	if r.net != nil {
		v.IP = r.net.ip
	}
	for _, states := range [][]containerState{r.inits, r.containers} {
		for i := range states {
			if f := states[i].failure(now); f.worse(v.Failure) {
				v.Failure = f
			}
		}
	}
	return v
}

func (r *replica) readyLocked() bool {
	for _, c := range r.containers {
		if !c.running || !c.ready {
			return false
		}
	}
	return len(r.containers) > 0
}

// update changes one container's state and, when anything changed that
// status or EndpointSlices show, tells the controllers.
func (r *replica) update(ref containerRef, change func(c *containerState)) {
	r.mu.Lock()
	state := r.stateLocked(ref)
	before := *state
	change(state)
	after := *state
	changed := before.running != after.running || before.ready != after.ready || before.setup != after.setup ||
		before.probe != after.probe || before.restarts != after.restarts || before.lastExit != after.lastExit ||
		before.exit != after.exit || before.completed != after.completed
	if ready := r.readyLocked(); ready && r.readySince.IsZero() {
		r.readySince = time.Now()
	} else if !ready {
		r.readySince = time.Time{}
	}
	r.mu.Unlock()
	if changed {
		r.rt.replicaChanged(r.key)
		r.rt.pods.changed(r)
	}
}

// admission is the API server's answer to a replica's Pod.
type admission struct {
	pod     *corev1.Pod
	refusal *failure
	err     error
}

// start has the replica's Pod admitted (while its network is made), then
// places it on this machine, runs its init containers to completion and
// then every container; done closes when all have stopped and the network
// is gone. A Pod refused never runs a process, and one that does not fit
// waits, Pending.
func (r *replica) start(pod *corev1.Pod) {
	ctx, cancel := context.WithCancel(r.rt.ctx)
	r.cancel = cancel
	go func() {
		answer := make(chan admission, 1)
		go func() {
			admitted, refusal, err := r.rt.admit(ctx, pod, r.askFirst)
			answer <- admission{admitted, refusal, err}
		}()
		n, err := r.rt.openNetwork()
		r.mu.Lock()
		r.net, r.netErr = n, err
		r.mu.Unlock()
		if err != nil {
			r.log.Info("Replica network cannot be made", "error", err.Error())
		} else {
			r.pod.IP, r.pod.HostIP = n.ip, n.hostIP()
		}
		if !r.admitAndPlace(ctx, pod, <-answer) {
			cancel()
			close(r.done)
			r.rt.replicaGone(r)
			if err := n.close(); err != nil {
				r.log.Error(err, "Replica network not removed")
			}
			return
		}
		r.cgroup = r.rt.cgroups.tree.Pod(string(r.pod.UID))
		synced := make(chan struct{})
		go func() {
			defer close(synced)
			r.syncVolumes(ctx) // init containers read volumes too
		}()
		r.runContainers(ctx)
		cancel()
		<-synced // no volume is being written when they are removed
		if err := r.cgroup.Remove(); err != nil {
			r.log.Error(err, "Replica cgroup not removed")
		}
		if err := r.removeVolumes(); err != nil {
			r.log.Error(err, "Replica volumes not removed")
		}
		close(r.done)
		r.rt.replicaGone(r)
		// After the replica is gone: removing a veth takes the kernel tens
		// of milliseconds, which nothing should wait for (at exit the
		// namespace's end removes it anyway).
		if err := n.close(); err != nil {
			r.log.Error(err, "Replica network not removed")
		}
	}()
}

// runContainers makes the pod's sandbox, runs the init containers and,
// once all have completed, every container, until ctx ends. A replica
// stopped while it initializes starts no container.
func (r *replica) runContainers(ctx context.Context) {
	if !r.openSandbox(ctx) {
		return // stopped before it had a sandbox
	}
	defer r.closeSandbox()
	if !r.initialize(ctx) {
		return // stopped while initializing
	}
	var wg sync.WaitGroup
	for i := range r.spec.Containers {
		wg.Go(func() { r.runContainer(ctx, regular(i)) })
	}
	wg.Wait()
}

// admitAndPlace takes the API server's answer to the replica's Pod: a
// refusal ends the replica before anything runs; an admitted Pod is
// published (with a LimitRange's defaults applied to the containers) and
// placed on this machine as the scheduler places a pod: once its claims
// are bound (awaitClaims, the volume binding check), if its tolerations
// and node affinity allow this machine (fitNode), when its requests fit
// (place), waiting Pending and Unschedulable meanwhile. False when
// the replica cannot run: refused, or stopped first.
func (r *replica) admitAndPlace(ctx context.Context, pod *corev1.Pod, a admission) bool {
	switch {
	case a.err != nil:
		return false // stopped while asking
	case a.refusal != nil:
		r.rt.podRefused(r, a.refusal)
		r.log.Info("Pod refused by the API server", "reason", a.refusal.Message)
		return false
	}
	applyAdmitted(r.spec, a.pod)
	r.rt.podAdmitted(r.key, r.hash)
	r.rt.pods.track(r, pod)
	if !r.awaitClaims(ctx) || !r.fitNode(ctx) {
		return false
	}
	return r.place(ctx)
}

// fitNode is the scheduler's TaintToleration and NodeAffinity filters
// for this machine (nodefit.Node.Unfit): a replica whose pod cannot go
// to it waits Pending and Unschedulable, in the scheduler's words, until
// it is stopped — a new pod template is what mends it, as this node's
// labels and taints do not change. True when it may go.
func (r *replica) fitNode(ctx context.Context) bool {
	why := r.rt.node.identity.Unfit(r.spec, r.log)
	if why == "" {
		return true
	}
	r.log.Info("Replica cannot go to this machine: its node selector, affinity or tolerations exclude it", "reason", why)
	r.setUnschedulable(why)
	<-ctx.Done()
	return false
}

// place waits until the replica's requests fit beside those of the
// replicas placed on this machine, Pending and Unschedulable meanwhile,
// and takes its share. False when ctx ended first.
func (r *replica) place(ctx context.Context) bool {
	want := nodefit.PodRequests(r.spec)
	logged := ""
	for {
		why, retry := r.rt.node.place(r, want)
		if why != "" && why != logged {
			r.log.Info("Replica waits for room on this machine", "reason", why)
			logged = why
		}
		r.setUnschedulable(why)
		if why == "" {
			return true
		}
		select {
		case <-retry:
		case <-ctx.Done():
			return false
		}
	}
}

// setUnschedulable records why the replica is not placed yet, in the
// scheduler's words ("" once placed), telling the Pod and the Deployment
// when it changes. Its callers log why, each in its own words.
func (r *replica) setUnschedulable(why string) {
	r.mu.Lock()
	changed := r.unschedulable != why
	r.unschedulable = why
	r.mu.Unlock()
	if changed {
		r.rt.replicaChanged(r.key)
		r.rt.pods.changed(r)
	}
}

// stop marks the replica terminating and stops its containers in the
// background: SIGTERM, the grace period, SIGKILL.
func (r *replica) stop() {
	r.mu.Lock()
	already := r.terminating
	r.terminating = true
	r.mu.Unlock()
	if already {
		return
	}
	r.log.Info("Stopping replica")
	r.cancel()
	r.rt.replicaChanged(r.key)
	r.rt.pods.changed(r)
}

// gracePeriod is terminationGracePeriodSeconds (Kubernetes' default 30),
// all of it, as a kubelet gives it; knit dev's own shutdown cuts it short
// (Options.ShutdownGracePeriod, through Runtime.killed).
func (r *replica) gracePeriod() time.Duration {
	return time.Duration(ptr.Deref(r.spec.TerminationGracePeriodSeconds, 30)) * time.Second
}

// pids are the replica's running processes, for tests and debugging.
func (r *replica) pids() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, c := range append(slices.Clone(r.inits), r.containers...) {
		if c.running && c.pid > 0 {
			out = append(out, c.pid)
		}
	}
	return out
}
