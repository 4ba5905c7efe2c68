package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/kobuild"
	"github.com/knitops/knit/local/netns"
	"github.com/knitops/knit/local/nodefit"
)

// errShutdown is returned once Shutdown has begun: nothing new starts.
var errShutdown = errors.New("local runtime is shut down")

// Runtime runs the replicas of revision Deployments as local processes
// and publishes their EndpointSlices and Pods. Create it with New,
// register it with SetupWithManager, stop it with Shutdown.
type Runtime struct {
	opts       Options
	instance   string // the state directory's ReplicaMarker value
	buildersMu sync.Mutex
	builders   map[string]*kobuild.Builder // by module dir
	log        logr.Logger
	client     client.Client // the manager's: cached reads, direct writes
	reader     client.Reader // uncached, for the ConfigMaps and Secrets of env
	// sliceWriter writes EndpointSlices without logging API warnings.
	sliceWriter client.Client
	queues      queues
	pods        podPublisher
	netPool     *netns.Pool // NetworkIsolated's; nil when replicas share the host's
	cgroups     replicaCgroups
	node        *node // what replicas asked of this machine

	ctx      context.Context // the lifetime of replicas and builds
	cancel   context.CancelFunc
	killed   chan struct{} // closed when Shutdown runs out of time: no more grace
	killOnce sync.Once
	running  sync.WaitGroup // one per replica until its processes are gone

	mu          sync.Mutex
	closed      bool
	deployments map[types.NamespacedName]*deploymentState
	hints       map[types.NamespacedName]scaleHint // HintScale's, until the watch catches up
}

// deploymentState is the runtime's side of one Deployment.
type deploymentState struct {
	uid      types.UID
	hash     string
	pins     *imagePins
	replicas []*replica // live and terminating, until their processes are gone
	progress progressClock
	gone     bool // deleted or no longer managed: everything is stopping
	// refusal is the API server's last no to one of its Pods (a quota,
	// LimitRange or PodSecurity), until a Pod is admitted; no replica
	// starts before retryAt, as the ReplicaSet controller backs off.
	refusal  *failure
	refusals int
	retryAt  time.Time
}

// refusalBackoff paces asking again about refused pods, 1 s doubling to
// 30 s: a quota or a namespace's policy is changed by hand.
var refusalBackoff = Backoff{Initial: time.Second, Max: 30 * time.Second}

// refused records f, the refusal of one of the Deployment's Pods, and
// when to try again.
func (st *deploymentState) refused(f *failure, now time.Time) {
	st.refusal = f
	st.refusals++
	st.retryAt = now.Add(refusalBackoff.Delay(st.refusals))
}

// synced is a Deployment's replicas after sync, and what its status needs.
type synced struct {
	views         []replicaView
	hash          string
	progressSince time.Time
	refusal       *failure      // why its Pods are refused, while new ones wait
	retryIn       time.Duration // until a refused Deployment tries again
}

// New makes a runtime; nothing runs until SetupWithManager and the
// manager's start.
func New(opts Options) (*Runtime, error) {
	if err := opts.Defaults(); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	for _, dir := range []string{opts.buildsDir(), opts.logsDir()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("local runtime: %w", err)
		}
	}
	var pool *netns.Pool
	if opts.Network == NetworkIsolated {
		var err error
		if pool, err = netns.NewPool(); err != nil {
			return nil, fmt.Errorf("local runtime: %w", err)
		}
		pool.Refill() // the first replica need not wait for its network either
	}
	ctx, cancel := context.WithCancel(context.Background())
	rt := &Runtime{
		opts: opts, log: logr.Discard(), ctx: ctx, cancel: cancel, killed: make(chan struct{}), instance: instanceID(opts.StateDir),
		deployments: map[types.NamespacedName]*deploymentState{}, netPool: pool, node: newNode(opts.allocatable(), nodefit.Machine(opts.NodeLabels, opts.NodeTaints)),
	}
	return rt, nil
}

// buildsRun counts the builds that ran (cache misses) of the images
// named, in every module dir.
func (rt *Runtime) buildsRun(images ...string) int64 {
	rt.buildersMu.Lock()
	defer rt.buildersMu.Unlock()
	var n int64
	for _, b := range rt.builders {
		for _, image := range images {
			n += b.Runs(image)
		}
	}
	return n
}

// builderFor is the builder of one module dir; builders share the cache,
// where a binary's key already covers its sources.
func (rt *Runtime) builderFor(dir string) *kobuild.Builder {
	rt.buildersMu.Lock()
	defer rt.buildersMu.Unlock()
	if b, ok := rt.builders[dir]; ok {
		return b
	}
	if rt.builders == nil {
		rt.builders = map[string]*kobuild.Builder{}
	}
	b := kobuild.New(rt.ctx, rt.opts.Go, dir, rt.opts.buildsDir(), rt.log.WithName("build"))
	rt.builders[dir] = b
	return b
}

// Shutdown stops every replica — SIGTERM, the grace period, SIGKILL — and
// any build, and waits for them. A replica's grace period is cut at
// Options.ShutdownGracePeriod, so quitting knit dev never waits minutes
// for an app with a long one; when ctx ends first the rest are killed at
// once, and that is an error. Nothing starts afterwards. Safe to call
// more than once.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	cut := time.AfterFunc(rt.opts.ShutdownGracePeriod, func() { rt.killOnce.Do(func() { close(rt.killed) }) })
	defer cut.Stop()
	rt.mu.Lock()
	rt.closed = true
	for _, st := range rt.deployments {
		for _, r := range st.replicas {
			r.stop()
		}
	}
	rt.mu.Unlock()

	done := make(chan struct{})
	go func() {
		rt.running.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		rt.killOnce.Do(func() { close(rt.killed) })
		<-done
		err = fmt.Errorf("local runtime: replicas did not stop gracefully in time and were killed: %w", ctx.Err())
	}
	if rt.netPool != nil {
		if spareErr := rt.netPool.CloseSpare(); spareErr != nil {
			err = errors.Join(err, fmt.Errorf("local runtime: the spare replica network: %w", spareErr))
		}
	}
	rt.cancel()
	return err
}

// sync starts and stops d's replicas towards its spec and returns them,
// with the template hash and when progress was last made. While its Pods
// are refused no replica starts until the refusal's retry is due.
func (rt *Runtime) sync(d *appsv1.Deployment) (synced, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return synced{}, errShutdown
	}
	key := client.ObjectKeyFromObject(d)
	st := rt.deployments[key]
	if st == nil {
		st = &deploymentState{}
		rt.deployments[key] = st
	}
	if st.uid != d.UID { // a new object under an old name: nothing carries over
		st.uid, st.hash, st.gone = d.UID, "", false
		for _, r := range st.replicas {
			r.stop()
		}
	}
	hash := templateHash(&d.Spec.Template)
	if hash != st.hash {
		// A new template is a new ReplicaSet: it may be admitted.
		st.hash, st.pins, st.refusal, st.refusals = hash, &imagePins{}, nil, 0
	}
	now := time.Now()
	var retryIn time.Duration
	plan := planScale(st.views(now), hash, rt.replicasWanted(key, d, now))
	if st.refusal != nil && now.Before(st.retryAt) && plan.start > 0 {
		plan.start, retryIn = 0, st.retryAt.Sub(now)
	}
	for _, id := range plan.stop {
		for _, r := range st.replicas {
			if r.id == id {
				r.stop()
			}
		}
	}
	for range plan.start {
		r, err := rt.newReplica(key, st, d)
		if err != nil {
			return synced{}, err
		}
		st.replicas = append(st.replicas, r)
		rt.running.Add(1)
		r.log.Info("Starting replica", "ports", r.ports.byNumber)
		r.start(makePod(d, r.pod.Name, r.hash, r.pod.NodeName))
	}
	views := st.views(now)
	return synced{views: views, hash: hash, progressSince: st.progress.observe(d.Generation, readyUpdated(views, hash), now),
		refusal: st.refusal, retryIn: retryIn}, nil
}

// podRefused records the API server's no to r's Pod on its Deployment,
// at once: a replacement started while r still stops waits for the
// refusal's retry and then asks first (admit's askFirst).
func (rt *Runtime) podRefused(r *replica, f *failure) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if st := rt.deployments[r.key]; st != nil && st.hash == r.hash {
		st.refused(f, time.Now())
	}
}

// podAdmitted clears the Deployment's refusal once one of its Pods of
// template hash is admitted.
func (rt *Runtime) podAdmitted(key types.NamespacedName, hash string) {
	rt.mu.Lock()
	st := rt.deployments[key]
	cleared := st != nil && st.hash == hash && st.refusal != nil
	if cleared {
		st.refusal, st.refusals = nil, 0
	}
	rt.mu.Unlock()
	if cleared {
		rt.replicaChanged(key)
	}
}

// forget stops every replica of a Deployment that is gone or no longer
// managed, and returns them as they stop.
func (rt *Runtime) forget(key types.NamespacedName) []replicaView {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	delete(rt.hints, key)
	st := rt.deployments[key]
	if st == nil {
		return nil
	}
	st.gone = true
	for _, r := range st.replicas {
		r.stop()
	}
	return st.views(time.Now())
}

// newReplica makes (but does not start) a replica of d's template. Called
// with rt.mu held.
func (rt *Runtime) newReplica(key types.NamespacedName, st *deploymentState, d *appsv1.Deployment) (*replica, error) {
	tmpl := d.Spec.Template.DeepCopy()
	free := rt.unassignedPort
	if rt.netPool != nil {
		free = nil // a network of its own: the declared ports, as in a pod
	}
	ports, err := allocatePorts(&tmpl.Spec, free)
	if err != nil {
		return nil, err
	}
	id := rt.uniqueID(key.Namespace)
	sa := tmpl.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	r := &replica{
		rt: rt, key: key, id: id, hash: st.hash, spec: &tmpl.Spec, ports: ports, pins: st.pins, askFirst: st.refusal != nil,
		created: time.Now(), done: make(chan struct{}),
		pod: podIdentity{
			Name: key.Name + "-" + st.hash + "-" + id, Namespace: key.Namespace, UID: types.UID(rand.String(16)),
			Labels: tmpl.Labels, Annotations: tmpl.Annotations, ServiceAccountName: sa, NodeName: rt.node.identity.Name,
		},
		containers: make([]containerState, len(tmpl.Spec.Containers)),
		inits:      make([]containerState, len(tmpl.Spec.InitContainers)),
	}
	for i, c := range tmpl.Spec.Containers {
		r.containers[i].name = c.Name
	}
	for i, c := range tmpl.Spec.InitContainers {
		r.inits[i].name, r.inits[i].init = c.Name, true
	}
	r.log = rt.log.WithValues("deployment", klog.KRef(key.Namespace, key.Name), "replica", id)
	return r, nil
}

// unassignedPort is a free loopback port no live replica was given. The
// kernel may hand out a port again once it was released and not yet
// bound (Linux picks ephemeral ports at random, not in sequence): two
// replicas starting together were both given 36503, and one crash-looped
// on "address already in use". Called with rt.mu held.
func (rt *Runtime) unassignedPort() (int32, error) {
	return distinctPort(freeLoopbackPort, assignedPorts(rt.deployments))
}

// assignedPorts is every port the replicas of deployments were given.
func assignedPorts(deployments map[types.NamespacedName]*deploymentState) map[int32]bool {
	assigned := map[int32]bool{}
	for _, st := range deployments {
		for _, r := range st.replicas {
			for _, p := range r.ports.byNumber {
				assigned[p] = true
			}
		}
	}
	return assigned
}

// uniqueID is a pod-name suffix not used by any replica in the namespace,
// so that `<service>-<id>` EndpointSlice names never collide. Called with
// rt.mu held.
func (rt *Runtime) uniqueID(namespace string) string {
	for {
		id := rand.String(5)
		taken := false
		for key, st := range rt.deployments {
			for _, r := range st.replicas {
				taken = taken || (key.Namespace == namespace && r.id == id)
			}
		}
		if !taken {
			return id
		}
	}
}

// replicaGone drops a replica whose processes have all exited.
func (rt *Runtime) replicaGone(r *replica) {
	rt.node.remove(r)
	rt.mu.Lock()
	if st := rt.deployments[r.key]; st != nil {
		st.replicas = slices.DeleteFunc(st.replicas, func(x *replica) bool { return x == r })
		if st.gone && len(st.replicas) == 0 {
			delete(rt.deployments, r.key)
		}
	}
	rt.mu.Unlock()
	r.log.Info("Replica stopped")
	rt.running.Done()
	rt.replicaChanged(r.key)
	rt.pods.gone(r)
	// Its Services' slices go now: the Deployment's next pass sees only
	// the replicas left, none when this was the last, and would not know
	// which Services this one was in.
	rt.enqueueServices(rt.ctx, r.key.Namespace, []replicaView{{Labels: r.pod.Labels}})
}

// replicasIn is every replica in a namespace, for EndpointSlices.
func (rt *Runtime) replicasIn(namespace string) []replicaView {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var views []replicaView
	now := time.Now()
	for key, st := range rt.deployments {
		if key.Namespace == namespace {
			views = append(views, st.views(now)...)
		}
	}
	return views
}

func (st *deploymentState) views(now time.Time) []replicaView {
	views := make([]replicaView, 0, len(st.replicas))
	for _, r := range st.replicas {
		views = append(views, r.view(now))
	}
	return views
}
