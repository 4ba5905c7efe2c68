//go:build !unit

package announce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/gitsync/events"
	"github.com/knitops/knit/gitsync/eventstore"
	"github.com/knitops/knit/gitsync/plan"
	"github.com/knitops/knit/internal/poll"
)

// receiver is a CloudEvents sink on a loopback address reserved while
// nothing listens there: down until up is called.
type receiver struct {
	t    *testing.T
	addr string

	mu  sync.Mutex
	got []cloudevents.Event
}

func newReceiver(t *testing.T) *receiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, addr: l.Addr().String()}
	l.Close()
	return r
}

func (r *receiver) URL() string { return "http://" + r.addr + "/events" }

// up starts listening on the reserved address, as a sink coming back.
func (r *receiver) up() {
	r.t.Helper()
	srv := httptest.NewUnstartedServer(r)
	srv.Listener.Close()
	poll.Until(r.t, "listening on "+r.addr+" again", 10*time.Millisecond, 10*time.Second, func(context.Context) (bool, string) {
		l, err := net.Listen("tcp", r.addr)
		srv.Listener = l
		return err == nil, fmt.Sprint(err)
	})
	srv.Start()
	r.t.Cleanup(srv.Close)
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	e, err := cehttp.NewEventFromHTTPRequest(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.got = append(r.got, *e)
	r.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

// ids are the ids of the events received, in order, repeats included.
func (r *receiver) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.got))
	for i, e := range r.got {
		out[i] = e.ID()
	}
	return out
}

// start is a control plane's event path as platform wires it: an
// Announcer on a Dispatcher whose undelivered events wait in knit-system's
// ConfigMaps. queueSize 0 is the default.
func start(t *testing.T, queueSize int) (*Announcer, *events.Dispatcher) {
	t.Helper()
	store := &eventstore.ConfigMaps{Client: k8s, Reader: k8s, Namespace: config.SystemNamespace}
	d, err := events.NewDispatcher(events.Options{Store: store, QueueSize: queueSize,
		BackoffBase: time.Millisecond, BackoffMax: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return New(k8s, d), d
}

// stop ends a control plane at once, as SIGTERM with a sink down does.
func stop(t *testing.T, d *events.Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatalf("Close: %v, want undelivered events kept, not lost", err)
	}
}

// newEventSink creates an EventSink for url.
func newEventSink(t *testing.T, ns, url string) *knitv1alpha1.EventSink {
	t.Helper()
	es := &knitv1alpha1.EventSink{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci"}, Spec: knitv1alpha1.EventSinkSpec{URI: url}}
	if err := k8s.Create(context.Background(), es); err != nil {
		t.Fatal(err)
	}
	return es
}

// reconcileSink runs the EventSink reconciler once — the dispatcher gets
// the sink, the status its counts — and returns the EventSink as stored.
func reconcileSink(t *testing.T, a *Announcer, es *knitv1alpha1.EventSink) *knitv1alpha1.EventSink {
	t.Helper()
	r := &sinksReconciler{a: a}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(es)}); err != nil {
		t.Fatal(err)
	}
	got := &knitv1alpha1.EventSink{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(es), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// waitStatus reconciles the sink until its status counts delivered and dropped.
func waitStatus(t *testing.T, a *Announcer, es *knitv1alpha1.EventSink, delivered, dropped int64) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("status delivered %d dropped %d", delivered, dropped), 20*time.Millisecond, 20*time.Second,
		func(context.Context) (bool, string) {
			s := reconcileSink(t, a, es).Status
			return s.Delivered == delivered && s.Dropped == dropped, fmt.Sprintf("delivered %d dropped %d", s.Delivered, s.Dropped)
		})
}

// savedIDs are the ids of the events saved for the sink, in order.
func savedIDs(t *testing.T, es *knitv1alpha1.EventSink) []string {
	t.Helper()
	st, err := (&eventstore.ConfigMaps{Reader: k8s, Namespace: config.SystemNamespace}).Load(context.Background(), es.Namespace+"/"+es.Name)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(st.Events))
	for i, raw := range st.Events {
		var e cloudevents.Event
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		ids[i] = e.ID()
	}
	return ids
}

func failingRepo(ns string) *knitv1alpha1.GitRepository {
	return &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop", UID: types.UID("uid-" + ns)}}
}

func commit(i int) plan.Commit {
	return plan.Commit{Repository: "shop", Branch: "main", Main: true, SHA: fmt.Sprintf("%040x", i), Author: "Ada <ada@example.com>", Message: fmt.Sprintf("Change %d", i)}
}

// Events for a sink that is down outlive the process delivering them: the
// next control plane, on the same API server, delivers them in order with
// their original ids once the sink is back, and the EventSink's status
// counts them.
func TestUndeliveredEventsSurviveRestart(t *testing.T) {
	ns := newNamespace(t)
	sink := newReceiver(t)
	es := newEventSink(t, ns, sink.URL())
	a, d := start(t, 0)
	reconcileSink(t, a, es)
	for i := range 3 {
		a.SyncFailed(context.Background(), failingRepo(ns), commit(i), errors.New("render: service.yaml: bad YAML"))
	}
	var want []string
	poll.Until(t, "three events saved", 20*time.Millisecond, 20*time.Second, func(context.Context) (bool, string) {
		want = savedIDs(t, es)
		return len(want) == 3, fmt.Sprint(want)
	})
	stop(t, d)

	a, _ = start(t, 0)
	reconcileSink(t, a, es)
	sink.up()
	poll.Until(t, "the saved events delivered", 20*time.Millisecond, 20*time.Second, func(context.Context) (bool, string) {
		return len(sink.ids()) >= 3, fmt.Sprint(sink.ids())
	})
	if diff := cmp.Diff(want, sink.ids()); diff != "" {
		t.Errorf("received after the restart (-saved +received):\n%s", diff)
	}
	waitStatus(t, a, es, 3, 0)
	if ids := savedIDs(t, es); len(ids) != 0 {
		t.Errorf("still saved after delivery: %v", ids)
	}
}

// Over the queue's bound the oldest events are dropped; the EventSink's
// status counts them, before and after a restart, and the rest arrive.
func TestBoundedQueueCountsDropped(t *testing.T) {
	ns := newNamespace(t)
	sink := newReceiver(t)
	es := newEventSink(t, ns, sink.URL())
	a, d := start(t, 3)
	reconcileSink(t, a, es)
	fail := func(i int) {
		a.SyncFailed(context.Background(), failingRepo(ns), commit(i), errors.New("render: bad YAML"))
	}
	fail(0)
	poll.Until(t, "the first event in flight", 10*time.Millisecond, 20*time.Second, func(context.Context) (bool, string) {
		st := d.Stats()[ns+"/ci"]
		return st.FailedAttempts > 0, fmt.Sprintf("%+v", st)
	})
	for i := 1; i < 6; i++ { // 1 and 2 are dropped for 3, 4 and 5
		fail(i)
	}
	waitStatus(t, a, es, 0, 2)
	var want []string
	poll.Until(t, "four events saved", 20*time.Millisecond, 20*time.Second, func(context.Context) (bool, string) {
		want = savedIDs(t, es)
		return len(want) == 4, fmt.Sprint(want)
	})
	stop(t, d)

	a, _ = start(t, 3)
	waitStatus(t, a, es, 0, 2)
	sink.up()
	waitStatus(t, a, es, 4, 2)
	if diff := cmp.Diff(want, sink.ids()); diff != "" {
		t.Errorf("received (-saved +received):\n%s", diff)
	}
}

// The GitRepository reconciler announces a failing head at every pass: a
// resync of the same commit failing the same way is the same fact, sent
// once — within a run and after a restart — while a new error on that
// commit is news.
func TestResyncOfFailingCommitSentOnce(t *testing.T) {
	ns := newNamespace(t)
	sink := newReceiver(t)
	sink.up()
	es := newEventSink(t, ns, sink.URL())
	a, d := start(t, 0)
	reconcileSink(t, a, es)
	repo, c, err := failingRepo(ns), commit(1), errors.New("render: service.yaml: bad YAML")
	for range 7 { // seven resyncs
		a.SyncFailed(context.Background(), repo, c, err)
	}
	waitStatus(t, a, es, 1, 0)
	if st := d.Stats()[ns+"/ci"]; st.Repeats != 6 {
		t.Errorf("repeats = %d, want 6", st.Repeats)
	}
	poll.Until(t, "the delivery saved", 20*time.Millisecond, 20*time.Second, func(context.Context) (bool, string) {
		st, err := (&eventstore.ConfigMaps{Reader: k8s, Namespace: config.SystemNamespace}).Load(context.Background(), ns+"/ci")
		return err == nil && st.Delivered == 1 && len(st.Recent) == 1, fmt.Sprintf("%+v %v", st, err)
	})
	stop(t, d)

	a, _ = start(t, 0)
	reconcileSink(t, a, es)
	a.SyncFailed(context.Background(), repo, c, err)                                         // the resync after the restart
	a.SyncFailed(context.Background(), repo, c, errors.New(`services "hello" is forbidden`)) // news
	waitStatus(t, a, es, 2, 0)
	ids := sink.ids()
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("received %v, want the first failure once, then the new one", ids)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for i, wantCommit := range []string{c.SHA, c.SHA} {
		e := sink.got[i]
		if e.Type() != events.TypeSyncFailed || e.Extensions()[events.ExtensionCommit] != wantCommit {
			t.Errorf("event %d: %s %v", i, e.Type(), e.Extensions())
		}
	}
}
