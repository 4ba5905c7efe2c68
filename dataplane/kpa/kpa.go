package kpa

import (
	"context"
	"maps"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/controllers/podautoscaler"
	"github.com/knitops/knit/dataplane/autoscaler"
	"github.com/knitops/knit/internal/endpointslices"
)

// KPA holds a decider per Revision and answers the PodAutoscaler
// reconciler. Safe for concurrent use.
type KPA struct {
	config    func() *autoscaler.Config
	endpoints client.Reader
	scrape    *http.Client
	now       func() time.Time
	wakes     chan event.GenericEvent

	mu   sync.Mutex
	revs map[types.NamespacedName]*revision
}

// revision is one PodAutoscaler's autoscaling state.
type revision struct {
	mu sync.Mutex
	// config is the config-autoscaler snapshot spec was built from: the
	// store swaps in a new one on every accepted edit, so a different
	// pointer means the operator changed something.
	config      *autoscaler.Config
	annotations map[string]string
	cc          int64
	spec        autoscaler.Spec
	specErr     error
	decider     *autoscaler.Decider
	state       autoscaler.State
	// activator load last reported, and when.
	activatorConcurrency, activatorRPS float64
	activatorAt                        time.Time
	// ready is the ready pods the last Recommend saw: what a tick
	// decides with between reconciles.
	ready int32
}

// New returns a KPA reading config-autoscaler through config and the
// Revisions' private EndpointSlices through endpoints, a reader of a cache
// with endpointslices' index (SetupWithManager registers it).
func New(config func() *autoscaler.Config, endpoints client.Reader) *KPA {
	return &KPA{
		config:    config,
		endpoints: endpoints,
		scrape:    &http.Client{Timeout: time.Second},
		now:       time.Now,
		wakes:     make(chan event.GenericEvent, 1024),
		revs:      map[types.NamespacedName]*revision{},
	}
}

// SetupWithManager adds the KPA to mgr, so its ticks run with it, and
// indexes mgr's EndpointSlices by Service for the scrape's lookup; the
// KPA's endpoints must read mgr's cache.
func (k *KPA) SetupWithManager(mgr ctrl.Manager) error {
	if err := endpointslices.Index(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	return mgr.Add(k)
}

// Wakes is the channel the PodAutoscaler controller watches.
func (k *KPA) Wakes() <-chan event.GenericEvent { return k.wakes }

// Recommend implements podautoscaler.Recommender with Knative's KPA.
func (k *KPA) Recommend(_ context.Context, pa *autoscalingv1alpha1.PodAutoscaler, ready, current int32) podautoscaler.Recommendation {
	now := k.now()
	rev := k.revision(pa, now, ready)
	rev.mu.Lock()
	defer rev.mu.Unlock()
	if rev.specErr != nil {
		return podautoscaler.StaticRecommender{}.Recommend(context.Background(), pa, ready, current)
	}
	rev.ready = ready
	rev.decider.Scale(now, ready)
	step := autoscaler.Reconcile(rev.spec.Scaler, rev.state, autoscaler.Observation{Now: now, Decision: rev.decider.Status(), ReadyPods: ready})
	rev.state = step.State
	rec := podautoscaler.Recommendation{DesiredScale: current, Mode: networkingv1alpha1.SKSOperationModeServe, RequeueAfter: step.RequeueAfter,
		InitialReady: initialReady(rev.spec.Scaler)}
	// The decider first decides a tick interval after it started, as
	// Knative's per-decider ticker first fires; come back exactly then, not
	// on this KPA's shared ticker, which may wake it up to an interval later.
	if wait := rev.decider.FirstTick().Sub(now); wait > 0 && (rec.RequeueAfter <= 0 || wait < rec.RequeueAfter) {
		rec.RequeueAfter = wait
	}
	if step.Apply {
		rec.DesiredScale = step.Want
	}
	if step.State.Mode == autoscaler.SKSModeProxy {
		rec.Mode, rec.NumActivators = networkingv1alpha1.SKSOperationModeProxy, 1
	}
	return rec
}

// initialReady is the ready replicas a new revision needs to count as
// initialized; min-scale counts only while the revision is reachable.
func initialReady(spec autoscaler.ScalerSpec) int32 {
	min := spec.MinScale
	if !spec.Reachable {
		min = 0
	}
	return podautoscaler.InitialReady(spec.InitialScale, min, spec.MaxScale)
}

// revision returns the state for pa, creating it or refreshing its spec
// when config-autoscaler, the annotations, containerConcurrency or
// reachability changed. A refreshed decider keeps its metric windows, so an
// operator's edit to config-autoscaler reaches running revisions at their
// next tick without a restart or a cold decider.
func (k *KPA) revision(pa *autoscalingv1alpha1.PodAutoscaler, now time.Time, ready int32) *revision {
	key := types.NamespacedName{Namespace: pa.Namespace, Name: pa.Name}
	k.mu.Lock()
	rev, ok := k.revs[key]
	if !ok {
		rev = &revision{state: autoscaler.NewState(pa.CreationTimestamp.Time)}
		k.revs[key] = rev
	}
	k.mu.Unlock()

	rev.mu.Lock()
	defer rev.mu.Unlock()
	reachable := pa.Spec.Reachability != autoscalingv1alpha1.ReachabilityUnreachable
	cfg := k.config()
	if ok && rev.config == cfg && maps.Equal(rev.annotations, pa.Annotations) && rev.cc == pa.Spec.ContainerConcurrency && rev.spec.Scaler.Reachable == reachable {
		return rev
	}
	rev.config, rev.annotations, rev.cc = cfg, maps.Clone(pa.Annotations), pa.Spec.ContainerConcurrency
	rev.spec, rev.specErr = autoscaler.NewSpec(cfg, pa.Annotations, pa.Spec.ContainerConcurrency)
	rev.spec.Scaler.Reachable = reachable
	switch {
	case rev.specErr != nil:
	case rev.decider == nil:
		rev.decider = autoscaler.NewDecider(rev.spec.Decider, now, ready)
	default:
		rev.decider.Update(rev.spec.Decider)
	}
	return rev
}

// Forget implements podautoscaler.Recommender.
func (k *KPA) Forget(pa types.NamespacedName) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.revs, pa)
}

// Poke is the activator saying a request waits for a Revision with no
// ready replica: record it as load and decide now, not on the next tick.
func (k *KPA) Poke(rev types.NamespacedName) {
	if r := k.lookup(rev); r != nil {
		r.mu.Lock()
		if r.decider != nil {
			r.decider.Record(k.now(), 1, 1)
		}
		r.mu.Unlock()
	}
	k.wake(rev)
}

// activatorLoadMaxAge is how long a report of the activator's load counts.
// Activators report every second while they hold load and once more when
// it ends; a figure not repeated for ten rounds is from an activator that
// stopped, and must not hold the Revision's scale up for ever.
const activatorLoadMaxAge = 10 * time.Second

// ActivatorLoad adds the load the activator holds for a Revision to what
// the ticks record, until activatorLoadMaxAge passes without a new report.
// A Revision the KPA does not decide for is ignored.
func (k *KPA) ActivatorLoad(rev types.NamespacedName, concurrency, rps float64) {
	if r := k.lookup(rev); r != nil {
		r.mu.Lock()
		r.activatorConcurrency, r.activatorRPS, r.activatorAt = concurrency, rps, k.now()
		r.mu.Unlock()
	}
}

// activatorLoad is the activator's load to record at now; r.mu held.
func (r *revision) activatorLoad(now time.Time) (concurrency, rps float64) {
	if now.Sub(r.activatorAt) >= activatorLoadMaxAge {
		return 0, 0
	}
	return r.activatorConcurrency, r.activatorRPS
}

func (k *KPA) lookup(rev types.NamespacedName) *revision {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.revs[rev]
}

func (k *KPA) wake(rev types.NamespacedName) {
	pa := &autoscalingv1alpha1.PodAutoscaler{}
	pa.Namespace, pa.Name = rev.Namespace, rev.Name
	select {
	case k.wakes <- event.GenericEvent{Object: pa}:
	default: // the controller is behind; the next tick wakes it again
	}
}
