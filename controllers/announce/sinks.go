package announce

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/events"
	"github.com/knitops/knit/gitsync/plan"
)

// statsPeriod is how often an EventSink's delivered and dropped counts are
// written to its status.
const statsPeriod = 10 * time.Second

// Announcer turns what happens to Git-deployed resources into events for
// the EventSinks of their namespace.
type Announcer struct {
	client     client.Client
	dispatcher *events.Dispatcher

	mu    sync.Mutex
	sinks map[string][]scopedSink // by namespace
	sent  map[string]string       // last announced state per object UID
}

// New returns an Announcer delivering through dispatcher.
func New(c client.Client, dispatcher *events.Dispatcher) *Announcer {
	return &Announcer{client: c, dispatcher: dispatcher, sinks: map[string][]scopedSink{}, sent: map[string]string{}}
}

// scopedSink is a namespace's sink and the pull request whose preview it
// is ("" for none). A pull request's head may change an EventSink; its
// preview copy (plan.PreviewName) hears of that pull request's objects
// only: production's events never go where an unmerged head points.
type scopedSink struct {
	events.Sink
	pullRequest string
}

// hears reports whether s is sent an event about an object of
// pullRequest ("" for production's).
func (s scopedSink) hears(pullRequest string) bool {
	return s.pullRequest == "" || s.pullRequest == pullRequest
}

// sinksReconciler keeps the dispatcher's sinks equal to the EventSinks
// and writes their delivery counts back.
type sinksReconciler struct{ a *Announcer }

func (r *sinksReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	list := &knitv1alpha1.EventSinkList{}
	if err := r.a.client.List(ctx, list); err != nil {
		return ctrl.Result{}, err
	}
	byNS := map[string][]scopedSink{}
	var all []events.Sink
	for _, es := range list.Items {
		s := sinkOf(&es)
		if s.Validate() != nil {
			continue
		}
		byNS[es.Namespace] = append(byNS[es.Namespace], scopedSink{Sink: s, pullRequest: es.Labels[plan.PullRequestLabel]})
		all = append(all, s)
	}
	if err := r.a.dispatcher.SetSinks(all...); err != nil {
		return ctrl.Result{}, fmt.Errorf("set event sinks: %w", err)
	}
	r.a.mu.Lock()
	r.a.sinks = byNS
	r.a.mu.Unlock()

	es := &knitv1alpha1.EventSink{}
	if err := r.a.client.Get(ctx, req.NamespacedName, es); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{RequeueAfter: statsPeriod}, r.markStatus(ctx, es)
}

// ReasonEgressDenied is the EventSink's Ready reason when knit's egress
// policy refuses its address: loopback, link-local, the control plane's
// own, or a scheme other than http(s), unless an operator allows it in
// config-network's egress-allow.
const ReasonEgressDenied = "EgressDenied"

// markStatus writes the sink's Ready and delivery counts. Ready is False
// when the URI is unusable, when the egress policy refuses where it points
// now, or when it refused the address the last delivery resolved to (a
// name that changed its answer); events for a refused sink are dropped,
// never sent.
func (r *sinksReconciler) markStatus(ctx context.Context, es *knitv1alpha1.EventSink) error {
	before := es.Status.DeepCopy()
	conds := knitv1alpha1.EventSinkConditions.Manage(&es.Status.Status)
	s := sinkOf(es)
	st, delivering := r.a.dispatcher.Stats()[s.Name]
	if err := s.Validate(); err != nil {
		conds.MarkFalse(duckv1.ConditionReady, "InvalidSink", err.Error())
	} else if err := r.a.dispatcher.CheckSink(ctx, s); err != nil {
		conds.MarkFalse(duckv1.ConditionReady, ReasonEgressDenied, err.Error())
	} else if delivering && st.Denied != "" {
		conds.MarkFalse(duckv1.ConditionReady, ReasonEgressDenied, st.Denied)
	} else {
		conds.MarkTrue(duckv1.ConditionReady)
	}
	if delivering && st.Restored {
		// Counts since the sink was created, restarts included; until the
		// saved ones are read they would count this run only.
		es.Status.Delivered, es.Status.Dropped = st.Delivered, st.Dropped
	}
	es.Status.ObservedGeneration = es.Generation
	if equality.Semantic.DeepEqual(before, &es.Status) {
		return nil
	}
	if err := r.a.client.Status().Update(ctx, es); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("update status of EventSink %s: %w", es.Name, err)
	}
	return nil
}

func sinkOf(es *knitv1alpha1.EventSink) events.Sink {
	mode := events.ModeBinary
	if es.Spec.Encoding == knitv1alpha1.EventEncodingStructured {
		mode = events.ModeStructured
	}
	return events.Sink{Name: es.Namespace + "/" + es.Name, URL: es.Spec.URI, Types: es.Spec.Types, Mode: mode}
}

// send announces o, about an object of pullRequest ("" for
// production's), to the sinks of namespace that hear of it, if any.
func (a *Announcer) send(ctx context.Context, namespace, pullRequest string, o events.Occurrence) {
	var sinks []events.Sink
	a.mu.Lock()
	for _, s := range a.sinks[namespace] {
		if s.hears(pullRequest) {
			sinks = append(sinks, s.Sink)
		}
	}
	a.mu.Unlock()
	if len(sinks) == 0 {
		return
	}
	e, err := events.NewEvent(o)
	if err == nil {
		err = a.dispatcher.Send(e, sinks...)
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Event not sent", "type", o.Type, "subject", o.Resource.Subject())
	}
}

// once reports whether state is new for uid, remembering it: each state
// of an object is announced once per run.
func (a *Announcer) once(uid, state string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sent[uid] == state {
		return false
	}
	a.sent[uid] = state
	return true
}
