// Command nodepath measures what a node-style knit dev would add to a cold
// start: a Node for this machine, the kube-controller-manager's Deployment
// and ReplicaSet controllers and the kube-scheduler doing what the local
// runtime emulates, and the runtime acting as that node's kubelet (it
// would start a process once it sees a Pod bound to the node).
//
// Run it from the repository's root once `make tools` has put
// kube-apiserver, etcd, kube-controller-manager and kube-scheduler in bin/:
//
//	go run ./hack/nodepath
//	go run ./hack/nodepath -n 20 -budget 3m -bin ./bin -v
//	go run ./hack/nodepath -gap 2s              # rate limiters refilled between runs
//	go run ./hack/nodepath -kube-api-qps 1000  # no client-side throttling
//
// Each run scales a Deployment from 0 to 1 and, separately, creates a new
// one with one replica; t0 is when that write returns, and the program's
// own informers (what the runtime's cache would see) time the Deployment's
// event (where today's runtime starts a replica), the ReplicaSet's
// scale-up, the Pod's creation and the Pod bound to the node. Between runs
// it times the API calls today's runtime makes on the start path: a dry-run
// Pod create (in parallel with the network) and the Pod's create and status
// patch (after, asynchronously). It talks to loopback addresses only and
// stops every process it started, also on error or interrupt.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

const (
	nodeName  = "this-machine"
	namespace = "nodepath"
	scaleName = "scale"
	appLabel  = "app"
	// fieldOwner is the runtime's field manager, so the writes are the
	// runtime's size.
	fieldOwner = client.FieldOwner("knit-local-runtime")
)

type options struct {
	runs    int
	warmup  int
	budget  time.Duration
	bin     string
	verbose bool
	// qps, when above 0, lifts the controller-manager's and scheduler's
	// client-side rate limits (20 and 50 requests/s by default).
	qps float64
	// gap is a pause between runs, which lets the components' client-side
	// rate limiters refill as they would between cold starts.
	gap time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.runs, "n", 20, "measured runs of each kind")
	flag.IntVar(&o.warmup, "warmup", 2, "runs of each kind before the measured ones, not counted")
	flag.DurationVar(&o.budget, "budget", 3*time.Minute, "bound on the runs, warm-up included; the runs made by then are reported")
	flag.StringVar(&o.bin, "bin", "bin", "directory holding kube-apiserver, etcd, kube-controller-manager and kube-scheduler")
	flag.BoolVar(&o.verbose, "v", false, "print every run")
	flag.DurationVar(&o.gap, "gap", 0, "pause between runs (lets the components' client-side rate limiters refill)")
	flag.Float64Var(&o.qps, "kube-api-qps", 0, "if above 0, the controller-manager's and scheduler's --kube-api-qps (burst twice that); 0 keeps their defaults")
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodepath:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) (err error) {
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return err
	}
	for _, b := range []string{"kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return fmt.Errorf("%w (run `make tools`, or point -bin at the binaries)", err)
		}
	}
	loadStart := loadavg()

	dir, err := os.MkdirTemp("", "knit-nodepath")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			fmt.Fprintf(os.Stderr, "nodepath: logs kept in %s\n", dir)
			return
		}
		os.RemoveAll(dir)
	}()

	// 1. The API server and etcd.
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("start the API server: %w", err)
	}
	defer func() {
		if serr := env.Stop(); serr != nil && err == nil {
			err = fmt.Errorf("stop the API server: %w", serr)
		}
	}()
	admin, err := env.AddUser(envtest.User{Name: "nodepath-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}

	// 2. The controllers and the scheduler, neither serving anything.
	kcmArgs := []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=deployment-controller,replicaset-controller",
		"--leader-elect=false",
		"--secure-port=0",
		"--bind-address=127.0.0.1",
	}
	schedArgs := []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--bind-address=127.0.0.1",
	}
	if o.qps > 0 {
		limits := []string{fmt.Sprintf("--kube-api-qps=%g", o.qps), fmt.Sprintf("--kube-api-burst=%d", int(2*o.qps))}
		kcmArgs = append(kcmArgs, limits...)
		schedArgs = append(schedArgs, limits...)
	}
	kcm, err := startChild(filepath.Join(bin, "kube-controller-manager"), dir, kcmArgs)
	if err != nil {
		return err
	}
	defer kcm.stop()
	sched, err := startChild(filepath.Join(bin, "kube-scheduler"), dir, schedArgs)
	if err != nil {
		return err
	}
	defer sched.stop()

	cfg.QPS = -1 // no client-side throttling: it would be measured too
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}

	// 3. The node.
	if err := createNode(ctx, c); err != nil {
		return err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return err
	}

	rec := newRecorder()
	ictx, cancelInformers := context.WithCancel(ctx)
	defer cancelInformers()
	if err := rec.watch(ictx, cs, c); err != nil {
		return err
	}

	scale := deployment(scaleName, 0)
	if err := c.Create(ctx, scale); err != nil {
		return err
	}

	// 4. The runs.
	m := &measurer{c: c, rec: rec, children: []*child{kcm, sched}, scale: scale}
	deadline := time.Now().Add(o.budget)
	var res results
	total := o.warmup + o.runs
	for i := range total {
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "nodepath: budget of %v spent after %d runs\n", o.budget, max(0, i-o.warmup))
			break
		}
		timeout := 30 * time.Second
		if i == 0 {
			timeout = 90 * time.Second // the controllers' and scheduler's caches fill
		}
		s, err := m.scaleRun(ctx, timeout)
		if err != nil {
			return fmt.Errorf("scale run %d: %w", i, err)
		}
		cr, err := m.createRun(ctx, i, timeout)
		if err != nil {
			return fmt.Errorf("create run %d: %w", i, err)
		}
		p, err := m.probe(ctx, i)
		if err != nil {
			return fmt.Errorf("probe %d: %w", i, err)
		}
		if o.verbose {
			fmt.Printf("run %2d scale: %v | create: %v | %v\n", i-o.warmup, s, cr, p)
		}
		if i >= o.warmup {
			res.scale = append(res.scale, s)
			res.create = append(res.create, cr)
			res.probes = append(res.probes, p)
		}
		if o.gap > 0 && i < total-1 {
			select {
			case <-time.After(o.gap):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	loadEnd := loadavg()
	res.print(os.Stdout, loadStart, loadEnd, kcmArgs, schedArgs)
	if len(res.scale) == 0 {
		return errors.New("no run finished within the budget")
	}
	return nil
}

// child is a control-plane process this program started.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func startChild(path, dir string, args []string) (*child, error) {
	name := filepath.Base(path)
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = childSysProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	ch := &child{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		ch.err = cmd.Wait()
		f.Close()
		close(ch.done)
	}()
	return ch, nil
}

// exited says why the process ended, if it did.
func (ch *child) exited() error {
	select {
	case <-ch.done:
		return fmt.Errorf("%s exited (%v); its log: %s\n%s", ch.name, ch.err, ch.log, tail(ch.log, 20))
	default:
		return nil
	}
}

// stop ends the process: SIGTERM, SIGKILL after 5 s.
func (ch *child) stop() {
	select {
	case <-ch.done:
		return
	default:
	}
	_ = ch.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-ch.done:
	case <-time.After(5 * time.Second):
		_ = ch.cmd.Process.Kill()
		<-ch.done
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// createNode registers this machine as a Ready, untainted node.
func createNode(ctx context.Context, c client.Client) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: nodeName,
		Labels: map[string]string{
			"kubernetes.io/hostname": nodeName,
			"kubernetes.io/os":       goruntime.GOOS,
			"kubernetes.io/arch":     goruntime.GOARCH,
		},
	}}
	if err := c.Create(ctx, node); err != nil {
		return fmt.Errorf("create node: %w", err)
	}
	// The TaintNodesByCondition admission plugin taints a new node
	// not-ready; the node-lifecycle controller that would lift it once the
	// node is Ready does not run.
	if len(node.Spec.Taints) > 0 {
		node.Spec.Taints = nil
		if err := c.Update(ctx, node); err != nil {
			return fmt.Errorf("untaint node: %w", err)
		}
	}
	now := metav1.Now()
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("24Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	node.Status = corev1.NodeStatus{
		Capacity:    res,
		Allocatable: res,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
			{Type: corev1.NodeHostName, Address: nodeName},
		},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion:  "v1.37.0",
			OperatingSystem: goruntime.GOOS,
			Architecture:    goruntime.GOARCH,
		},
	}
	if err := c.Status().Update(ctx, node); err != nil {
		return fmt.Errorf("write node status: %w", err)
	}
	return nil
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	l := map[string]string{appLabel: name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: l},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:  "app",
						Image: "example.com/app",
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					}},
					TerminationGracePeriodSeconds: ptr.To[int64](30),
				},
			},
		},
	}
}

// recorder keeps when this program's informers saw what; the times are
// taken in the event handlers, as the runtime's own cache would see them.
type recorder struct {
	mu       sync.Mutex
	deploy   map[string]time.Time // Deployment resourceVersion → seen
	rsUp     map[string]time.Time // Deployment name → its ReplicaSet seen scaled up from 0
	podAdded map[string]time.Time // app label → first Pod seen since arm
	podBound map[string]time.Time // app label → first Pod seen on the node since arm
	pods     cache.Indexer        // every Pod of the namespace
	rsets    cache.Indexer
}

func newRecorder() *recorder {
	r := &recorder{}
	r.arm()
	return r
}

// arm forgets what was seen so far.
func (r *recorder) arm() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deploy = map[string]time.Time{}
	r.rsUp = map[string]time.Time{}
	r.podAdded = map[string]time.Time{}
	r.podBound = map[string]time.Time{}
}

func setFirst(m map[string]time.Time, k string, t time.Time) {
	if _, ok := m[k]; !ok {
		m[k] = t
	}
}

func (r *recorder) watch(ctx context.Context, cs kubernetes.Interface, c client.Client) error {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace))
	// The kubelet's view: Pods bound to this node.
	onNode := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", nodeName).String()
		}))

	deploy := f.Apps().V1().Deployments().Informer()
	seenDeploy := func(obj any) {
		now := time.Now()
		if d, ok := obj.(*appsv1.Deployment); ok {
			r.mu.Lock()
			setFirst(r.deploy, d.ResourceVersion, now)
			r.mu.Unlock()
		}
	}
	if _, err := deploy.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seenDeploy,
		UpdateFunc: func(_, obj any) { seenDeploy(obj) },
	}); err != nil {
		return err
	}

	rs := f.Apps().V1().ReplicaSets().Informer()
	seenRS := func(old, obj any) {
		now := time.Now()
		n, ok := obj.(*appsv1.ReplicaSet)
		if !ok || ptr.Deref(n.Spec.Replicas, 1) < 1 {
			return
		}
		if o, ok := old.(*appsv1.ReplicaSet); ok && ptr.Deref(o.Spec.Replicas, 1) >= 1 {
			return
		}
		owner := metav1.GetControllerOf(n)
		if owner == nil {
			return
		}
		r.mu.Lock()
		setFirst(r.rsUp, owner.Name, now)
		r.mu.Unlock()
	}
	if _, err := rs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { seenRS(nil, obj) },
		UpdateFunc: seenRS,
	}); err != nil {
		return err
	}

	pods := f.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			now := time.Now()
			if p, ok := obj.(*corev1.Pod); ok {
				r.mu.Lock()
				setFirst(r.podAdded, p.Labels[appLabel], now)
				r.mu.Unlock()
			}
		},
	}); err != nil {
		return err
	}

	bound := onNode.Core().V1().Pods().Informer()
	kubelet := func(obj any) {
		now := time.Now()
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		if p.DeletionTimestamp == nil {
			r.mu.Lock()
			setFirst(r.podBound, p.Labels[appLabel], now)
			r.mu.Unlock()
			return
		}
		// Deleted: its process would be stopped; confirm as the kubelet
		// does, so it does not stay Terminating.
		go func() {
			err := c.Delete(ctx, p, client.GracePeriodSeconds(0), client.Preconditions{UID: &p.UID})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "nodepath: delete Pod %s: %v\n", p.Name, err)
			}
		}()
	}
	if _, err := bound.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    kubelet,
		UpdateFunc: func(_, obj any) { kubelet(obj) },
	}); err != nil {
		return err
	}

	r.pods = pods.GetIndexer()
	r.rsets = rs.GetIndexer()
	f.Start(ctx.Done())
	onNode.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	for typ, ok := range onNode.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	return nil
}

// chain is one run's times from t0, the write's return.
type chain struct {
	deploy, rs, pod, bound time.Duration
}

func (s chain) String() string {
	return fmt.Sprintf("deploy %s rs %s pod %s bound %s", ms(s.deploy), ms(s.rs), ms(s.pod), ms(s.bound))
}

// probe is one run's API calls on today's start path.
type probe struct {
	dryRun, create, patch time.Duration
}

func (p probe) String() string {
	return fmt.Sprintf("dry-run %s create %s patch %s", ms(p.dryRun), ms(p.create), ms(p.patch))
}

type measurer struct {
	c        client.Client
	rec      *recorder
	children []*child
	scale    *appsv1.Deployment
}

// waitFor polls cond (under the recorder's lock) until it holds.
func (m *measurer) waitFor(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		m.rec.mu.Lock()
		ok := cond()
		m.rec.mu.Unlock()
		if ok {
			return nil
		}
		for _, ch := range m.children {
			if err := ch.exited(); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %v", what, timeout)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// chainOf reads a run's times once all four were seen.
func (m *measurer) chainOf(ctx context.Context, timeout time.Duration, name, rv string, t0 time.Time) (chain, error) {
	var s chain
	r := m.rec
	err := m.waitFor(ctx, timeout, "Deployment "+name+" to have a bound Pod", func() bool {
		d, ok1 := r.deploy[rv]
		rs, ok2 := r.rsUp[name]
		p, ok3 := r.podAdded[name]
		b, ok4 := r.podBound[name]
		s = chain{d.Sub(t0), rs.Sub(t0), p.Sub(t0), b.Sub(t0)}
		return ok1 && ok2 && ok3 && ok4
	})
	return s, err
}

// noPods says the namespace has no Pod of the app any more.
func (m *measurer) noPods(name string) func() bool {
	return func() bool {
		for _, o := range m.rec.pods.List() {
			if p := o.(*corev1.Pod); p.Labels[appLabel] == name {
				return false
			}
		}
		return true
	}
}

// scaleRun scales the scale Deployment from 0 to 1 and back.
func (m *measurer) scaleRun(ctx context.Context, timeout time.Duration) (chain, error) {
	m.rec.arm()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: scaleName}}
	if err := m.c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`))); err != nil {
		return chain{}, err
	}
	t0 := time.Now()
	s, err := m.chainOf(ctx, timeout, scaleName, d.ResourceVersion, t0)
	if err != nil {
		return s, err
	}
	if err := m.c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":0}}`))); err != nil {
		return s, err
	}
	// Down when its Pods are gone and the informer has seen its
	// ReplicaSet at 0, so the next scale-up is a change from 0.
	err = m.waitFor(ctx, 30*time.Second, "scale-down", func() bool {
		if !m.noPods(scaleName)() {
			return false
		}
		for _, o := range m.rec.rsets.List() {
			rs := o.(*appsv1.ReplicaSet)
			if rs.Labels[appLabel] == scaleName && ptr.Deref(rs.Spec.Replicas, 1) != 0 {
				return false
			}
		}
		return true
	})
	return s, err
}

// createRun creates a Deployment of one replica, then deletes it, its
// ReplicaSet and its Pod (no garbage collector runs).
func (m *measurer) createRun(ctx context.Context, i int, timeout time.Duration) (chain, error) {
	name := fmt.Sprintf("create-%d", i)
	m.rec.arm()
	d := deployment(name, 1)
	if err := m.c.Create(ctx, d); err != nil {
		return chain{}, err
	}
	t0 := time.Now()
	s, err := m.chainOf(ctx, timeout, name, d.ResourceVersion, t0)
	if err != nil {
		return s, err
	}
	if err := m.c.Delete(ctx, d); err != nil {
		return s, err
	}
	sel := client.MatchingLabels{appLabel: name}
	if err := m.c.DeleteAllOf(ctx, &appsv1.ReplicaSet{}, client.InNamespace(namespace), sel); err != nil {
		return s, err
	}
	if err := m.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(namespace), sel, client.GracePeriodSeconds(0)); err != nil {
		return s, err
	}
	return s, m.waitFor(ctx, 30*time.Second, "cleanup of "+name, m.noPods(name))
}

// probe times today's runtime's calls for a replica's Pod: a dry-run
// create, then the create and a status patch.
func (m *measurer) probe(ctx context.Context, i int) (probe, error) {
	var p probe
	pod := m.runtimePod(fmt.Sprintf("%s-probe-%d", scaleName, i))

	dry := pod.DeepCopy()
	start := time.Now()
	if err := m.c.Create(ctx, dry, client.DryRunAll, fieldOwner); err != nil {
		return p, fmt.Errorf("dry-run create: %w", err)
	}
	p.dryRun = time.Since(start)

	created := pod.DeepCopy()
	start = time.Now()
	if err := m.c.Create(ctx, created, fieldOwner); err != nil {
		return p, fmt.Errorf("create: %w", err)
	}
	p.create = time.Since(start)

	now := metav1.Now()
	status := corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    "127.0.0.1",
		HostIPs:   []corev1.HostIP{{IP: "127.0.0.1"}},
		PodIP:     "10.200.0.5",
		PodIPs:    []corev1.PodIP{{IP: "10.200.0.5"}},
		StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Image: "example.com/app", ImageID: "example.com/app@sha256:" + strings.Repeat("0", 64),
			Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": created.UID}, "status": status})
	if err != nil {
		return p, err
	}
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: created.Name}}
	start = time.Now()
	if err := m.c.Status().Patch(ctx, target, client.RawPatch(types.MergePatchType, body), fieldOwner); err != nil {
		return p, fmt.Errorf("status patch: %w", err)
	}
	p.patch = time.Since(start)

	// Unbound, it goes at once.
	if err := m.c.Delete(ctx, created, client.Preconditions{UID: &created.UID}); err != nil {
		return p, fmt.Errorf("delete: %w", err)
	}
	return p, nil
}

// runtimePod is a Pod as today's runtime makes one (local/runtime's
// makePod): the template's spec, owned by the Deployment, unbound.
func (m *measurer) runtimePod(name string) *corev1.Pod {
	d := m.scale
	l := map[string]string{appLabel: name, appsv1.DefaultDeploymentUniqueLabelKey: "5d8f7c9b4"}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, Labels: l,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment", Name: d.Name, UID: d.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: *d.Spec.Template.Spec.DeepCopy(),
	}
}

type results struct {
	scale, create []chain
	probes        []probe
}

func (r *results) print(w *os.File, loadStart, loadEnd string, kcmArgs, schedArgs []string) {
	fmt.Fprintf(w, "kube-controller-manager %s\n", strings.Join(redact(kcmArgs), " "))
	fmt.Fprintf(w, "kube-scheduler %s\n", strings.Join(redact(schedArgs), " "))
	fmt.Fprintf(w, "load average at start: %s; at end: %s; %d CPUs\n", loadStart, loadEnd, goruntime.NumCPU())
	fmt.Fprintf(w, "%d runs; ms from the write's return (t0)\n\n", len(r.scale))
	fmt.Fprintf(w, "%-58s %8s %8s %8s\n", "", "median", "p90", "max")
	row := func(label string, ds []time.Duration) {
		if len(ds) == 0 {
			return
		}
		s := slices.Clone(ds)
		slices.Sort(s)
		fmt.Fprintf(w, "%-58s %8s %8s %8s\n", label, ms(rank(s, 0.5)), ms(rank(s, 0.9)), ms(s[len(s)-1]))
	}
	for _, k := range []struct {
		name string
		runs []chain
	}{{"scale 0→1", r.scale}, {"create", r.create}} {
		pick := func(f func(chain) time.Duration) []time.Duration {
			var ds []time.Duration
			for _, c := range k.runs {
				ds = append(ds, f(c))
			}
			return ds
		}
		row(k.name+": Deployment seen (today's runtime starts here)", pick(func(c chain) time.Duration { return c.deploy }))
		row(k.name+": ReplicaSet scaled up seen", pick(func(c chain) time.Duration { return c.rs }))
		row(k.name+": Pod appears (t1-t0)", pick(func(c chain) time.Duration { return c.pod }))
		row(k.name+": Pod bound, seen by node watch (t2-t0)", pick(func(c chain) time.Duration { return c.bound }))
		row(k.name+": added over today (t2 - Deployment seen)", pick(func(c chain) time.Duration { return c.bound - c.deploy }))
		fmt.Fprintln(w)
	}
	pick := func(f func(probe) time.Duration) []time.Duration {
		var ds []time.Duration
		for _, p := range r.probes {
			ds = append(ds, f(p))
		}
		return ds
	}
	row("Pod dry-run create (client.DryRunAll)", pick(func(p probe) time.Duration { return p.dryRun }))
	row("Pod create", pick(func(p probe) time.Duration { return p.create }))
	row("Pod status patch", pick(func(p probe) time.Duration { return p.patch }))
	row("Pod create + status patch", pick(func(p probe) time.Duration { return p.create + p.patch }))
}

// redact drops the temporary directory from the flags.
func redact(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if k, _, ok := strings.Cut(a, "="); ok && k == "--kubeconfig" {
			a = k + "=<kubeconfig>"
		}
		out[i] = a
	}
	return out
}

// rank is the nearest-rank percentile of sorted s.
func rank(s []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
}

// loadavg is /proc/loadavg's three averages.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
