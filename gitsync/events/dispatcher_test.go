package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestDeliveryModes(t *testing.T) {
	cases := []struct {
		mode        Mode
		wantEnc     binding.Encoding
		contentType string
	}{
		{ModeStructured, binding.EncodingStructured, "application/cloudevents+json"},
		{ModeBinary, binding.EncodingBinary, "application/json"},
		{"", binding.EncodingBinary, "application/json"}, // binary by default
	}
	for _, tc := range cases {
		t.Run(string(tc.mode), func(t *testing.T) {
			sink := &testSink{}
			d, _ := newTestDispatcher(t, nil)
			if err := d.SetSinks(Sink{Name: "default/ci", URL: serve(t, sink), Mode: tc.mode}); err != nil {
				t.Fatal(err)
			}
			want, err := NewEvent(Occurrence{
				Type:     TypeRevisionReady,
				Resource: Resource{Kind: "Revision", Namespace: "shop", Name: "checkout-a10867b"},
				Data:     Data{Repo: "shop", Branch: "main", Commit: "a10867b14bb761a232cd80139fbd4c0d33264240", Revision: "checkout-a10867b", URL: "http://checkout.shop.example"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Send(want); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the event", func() bool { return len(sink.acceptedIDs()) == 1 })

			sink.mu.Lock()
			got, a, h := sink.accepted[0], sink.attempts[0], sink.headers[0]
			sink.mu.Unlock()
			if a.encoding != tc.wantEnc {
				t.Errorf("encoding = %v, want %v", a.encoding, tc.wantEnc)
			}
			if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, tc.contentType) {
				t.Errorf("Content-Type = %q, want %q", ct, tc.contentType)
			}
			if got.ID() != want.ID() || got.Type() != TypeRevisionReady || got.Subject() != "shop/checkout-a10867b" || got.Source() != "/knit/shop/revision" {
				t.Errorf("got id/type/subject/source %q %q %q %q", got.ID(), got.Type(), got.Subject(), got.Source())
			}
			var data Data
			if err := json.Unmarshal(got.Data(), &data); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Data{Repo: "shop", Branch: "main", Commit: "a10867b14bb761a232cd80139fbd4c0d33264240", Revision: "checkout-a10867b", URL: "http://checkout.shop.example"}, data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			if got.Extensions()[ExtensionCommit] != "a10867b14bb761a232cd80139fbd4c0d33264240" {
				t.Errorf("extensions = %v", got.Extensions())
			}
		})
	}
}

// TestRetriesUntilAccepted: a sink failing the first attempts with a
// retryable status gets every event exactly once, in order, with the same
// id on every attempt.
func TestRetriesUntilAccepted(t *testing.T) {
	const failures = 3
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError, http.StatusTooManyRequests, http.StatusRequestTimeout} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			sink := &testSink{status: func(n int, _ cloudevents.Event) int {
				if n < failures {
					return code
				}
				return http.StatusOK
			}}
			d, reg := newTestDispatcher(t, nil)
			if err := d.SetSinks(Sink{Name: "flaky", URL: serve(t, sink)}); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for i := range 5 {
				e := testEvent(t, TypeRevisionReady, i)
				ids = append(ids, e.ID())
				if err := d.Send(e); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, "all events accepted", func() bool { return len(sink.acceptedIDs()) == len(ids) })

			if diff := cmp.Diff(ids, sink.acceptedIDs()); diff != "" {
				t.Errorf("accepted (-want +got):\n%s", diff)
			}
			wantAttempts := append([]string{ids[0], ids[0], ids[0]}, ids...)
			if diff := cmp.Diff(wantAttempts, sink.attemptIDs()); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
			eventually(t, "stats", func() bool { return stats(d, "flaky").Delivered == 5 })
			if s := stats(d, "flaky"); s.FailedAttempts != failures || s.Dropped != 0 || s.Queued != 0 {
				t.Errorf("stats = %+v", s)
			}
			if got := testutil.ToFloat64(d.metrics.delivered.WithLabelValues("flaky")); got != 5 {
				t.Errorf("delivered metric = %v, want 5", got)
			}
			if got := testutil.ToFloat64(d.metrics.failed.WithLabelValues("flaky")); got != failures {
				t.Errorf("failed attempts metric = %v, want %d", got, failures)
			}
			if n := testutil.CollectAndCount(reg, "knit_events_delivery_latency_seconds"); n != 1 {
				t.Errorf("latency series = %d, want 1", n)
			}
		})
	}
}

// TestSinkDownThenBack: events sent while nothing listens on the sink's
// address arrive, in order, once it listens again.
func TestSinkDownThenBack(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	d, _ := newTestDispatcher(t, nil)
	if err := d.SetSinks(Sink{Name: "outage", URL: "http://" + addr + "/events"}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 20 {
		e := testEvent(t, TypeRouteUpdated, i)
		ids = append(ids, e.ID())
		if err := d.Send(e); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "failed attempts while down", func() bool { return stats(d, "outage").FailedAttempts >= 5 })
	if s := stats(d, "outage"); s.Delivered != 0 || s.Dropped != 0 || s.Queued != 19 {
		t.Fatalf("while down: stats = %+v, want 19 queued and 1 in flight", s)
	}

	sink := &testSink{}
	srv := httptest.NewUnstartedServer(sink)
	srv.Listener.Close()
	eventually(t, "listening on "+addr+" again", func() bool {
		srv.Listener, err = net.Listen("tcp", addr)
		return err == nil
	})
	srv.Start()
	t.Cleanup(srv.Close)

	eventually(t, "every queued event", func() bool { return len(sink.acceptedIDs()) == len(ids) })
	if diff := cmp.Diff(ids, sink.acceptedIDs()); diff != "" {
		t.Errorf("accepted (-want +got):\n%s", diff)
	}
	// The sink records an event before answering; the count follows the answer.
	eventually(t, "delivered count", func() bool { return stats(d, "outage").Delivered == 20 })
	if s := stats(d, "outage"); s.Dropped != 0 || s.Queued != 0 {
		t.Errorf("after recovery: stats = %+v", s)
	}
}

// TestOverflowDropsOldest: with one event stuck in flight, a full queue
// drops its oldest entries and counts them.
func TestOverflowDropsOldest(t *testing.T) {
	inFlight, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	sink := &testSink{before: func(cloudevents.Event) {
		once.Do(func() { // hold the first delivery in flight
			close(inFlight)
			<-release
		})
	}}
	d, _ := newTestDispatcher(t, func(o *Options) { o.QueueSize = 3 })
	if err := d.SetSinks(Sink{Name: "slow", URL: serve(t, sink)}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 6 {
		e := testEvent(t, TypeRevisionReady, i)
		ids = append(ids, e.ID())
	}
	if err := d.Send(testEventFrom(ids, 0, t)); err != nil {
		t.Fatal(err)
	}
	<-inFlight
	for i := 1; i < 6; i++ {
		if err := d.Send(testEventFrom(ids, i, t)); err != nil {
			t.Fatal(err)
		}
	}
	if s := stats(d, "slow"); s.Dropped != 2 || s.Queued != 3 {
		t.Errorf("stats = %+v, want 2 dropped and 3 queued", s)
	}
	if got := testutil.ToFloat64(d.metrics.dropped.WithLabelValues("slow", dropOverflow)); got != 2 {
		t.Errorf("dropped{overflow} = %v, want 2", got)
	}
	if got := testutil.ToFloat64(d.metrics.depth.WithLabelValues("slow")); got != 3 {
		t.Errorf("queue depth = %v, want 3", got)
	}
	close(release)
	want := []string{ids[0], ids[3], ids[4], ids[5]}
	eventually(t, "the surviving events", func() bool { return len(sink.acceptedIDs()) == len(want) })
	if diff := cmp.Diff(want, sink.acceptedIDs()); diff != "" {
		t.Errorf("accepted (-want +got):\n%s", diff)
	}
	eventually(t, "an empty queue", func() bool { return testutil.ToFloat64(d.metrics.depth.WithLabelValues("slow")) == 0 })
}

// testEventFrom rebuilds event i of the ids list (testEvent is deterministic).
func testEventFrom(ids []string, i int, t *testing.T) cloudevents.Event {
	e := testEvent(t, TypeRevisionReady, i)
	if e.ID() != ids[i] {
		t.Fatalf("event %d is not deterministic", i)
	}
	return e
}

func TestFilterByType(t *testing.T) {
	all, readyOnly := &testSink{}, &testSink{}
	d, _ := newTestDispatcher(t, nil)
	if err := d.SetSinks(
		Sink{Name: "all", URL: serve(t, all)},
		Sink{Name: "ready", URL: serve(t, readyOnly), Types: []string{TypeRevisionReady}},
	); err != nil {
		t.Fatal(err)
	}
	types := []string{TypeRevisionReady, TypeRevisionFailed, TypeSyncFailed, TypeRevisionReady, TypeRouteUpdated}
	var allIDs, readyIDs []string
	for i, typ := range types {
		e := testEvent(t, typ, i)
		allIDs = append(allIDs, e.ID())
		if typ == TypeRevisionReady {
			readyIDs = append(readyIDs, e.ID())
		}
		if err := d.Send(e); err != nil {
			t.Fatal(err)
		}
	}
	// The unfiltered sink getting the last event means every Send was queued.
	eventually(t, "all events at the unfiltered sink", func() bool { return len(all.acceptedIDs()) == len(allIDs) })
	eventually(t, "ready events", func() bool { return len(readyOnly.acceptedIDs()) == len(readyIDs) })
	if diff := cmp.Diff(readyIDs, readyOnly.acceptedIDs()); diff != "" {
		t.Errorf("filtered sink (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(allIDs, all.acceptedIDs()); diff != "" {
		t.Errorf("unfiltered sink (-want +got):\n%s", diff)
	}
}

// TestRejectedNotRetried: a 4xx other than 408/429 is final; the next
// event goes out as usual.
func TestRejectedNotRetried(t *testing.T) {
	for _, code := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			bad := testEvent(t, TypeRevisionFailed, 1)
			sink := &testSink{status: func(_ int, e cloudevents.Event) int {
				if e.ID() == bad.ID() {
					return code
				}
				return http.StatusAccepted
			}}
			d, _ := newTestDispatcher(t, nil)
			if err := d.SetSinks(Sink{Name: "strict", URL: serve(t, sink)}); err != nil {
				t.Fatal(err)
			}
			good := testEvent(t, TypeRevisionReady, 2)
			for _, e := range []cloudevents.Event{bad, good} {
				if err := d.Send(e); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, "the good event", func() bool { return len(sink.acceptedIDs()) == 1 })
			if diff := cmp.Diff([]string{bad.ID(), good.ID()}, sink.attemptIDs()); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
			eventually(t, "stats", func() bool { return stats(d, "strict").Delivered == 1 })
			if s := stats(d, "strict"); s.Rejected != 1 || s.Dropped != 1 || s.FailedAttempts != 1 {
				t.Errorf("stats = %+v, want 1 rejected, dropped and failed attempt", s)
			}
			if got := testutil.ToFloat64(d.metrics.dropped.WithLabelValues("strict", dropRejected)); got != 1 {
				t.Errorf("dropped{rejected} = %v, want 1", got)
			}
		})
	}
}

func TestSetSinks(t *testing.T) {
	a, b := &testSink{}, &testSink{}
	urlA, urlB := serve(t, a), serve(t, b)
	d, reg := newTestDispatcher(t, nil)

	if err := d.SetSinks(Sink{Name: "ns/hook", URL: urlA}); err != nil {
		t.Fatal(err)
	}
	if err := d.Send(testEvent(t, TypeRevisionReady, 1)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "event at A", func() bool { return len(a.acceptedIDs()) == 1 })

	// Same name, new URL and mode: the worker follows.
	if err := d.SetSinks(Sink{Name: "ns/hook", URL: urlB, Mode: ModeStructured}); err != nil {
		t.Fatal(err)
	}
	if err := d.Send(testEvent(t, TypeRevisionReady, 2)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "event at B", func() bool { return len(b.acceptedIDs()) == 1 })
	if len(a.acceptedIDs()) != 1 {
		t.Errorf("A got %d events after the update, want 1", len(a.acceptedIDs()))
	}
	b.mu.Lock()
	if b.attempts[0].encoding != binding.EncodingStructured {
		t.Errorf("updated mode not applied: %v", b.attempts[0].encoding)
	}
	b.mu.Unlock()

	// Removing the sink stops its worker and forgets its series.
	d.mu.Lock()
	w := d.workers["ns/hook"]
	d.mu.Unlock()
	if err := d.SetSinks(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.done:
	default:
		t.Error("SetSinks returned before the removed worker stopped")
	}
	if _, ok := d.Stats()["ns/hook"]; ok {
		t.Error("removed sink still has stats")
	}
	if n := testutil.CollectAndCount(reg, "knit_events_delivered_total"); n != 0 {
		t.Errorf("removed sink still has %d delivered series", n)
	}
	if err := d.Send(testEvent(t, TypeRevisionReady, 3)); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(a.acceptedIDs())+len(b.acceptedIDs()) != 2 {
		t.Errorf("an event reached a removed sink")
	}
}

func TestSetSinksRejectsInvalid(t *testing.T) {
	d, _ := newTestDispatcher(t, nil)
	if err := d.SetSinks(Sink{Name: "keep", URL: "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		sinks []Sink
		want  string
	}{
		{"relative URL", []Sink{{URL: "/events"}}, "not an absolute http(s) URL"},
		{"other scheme", []Sink{{URL: "ftp://example.com/"}}, "not an absolute http(s) URL"},
		{"bad mode", []Sink{{URL: "http://example.com/", Mode: "json"}}, `mode "json"`},
		{"duplicate", []Sink{{Name: "x", URL: "http://a.example/"}, {Name: "x", URL: "http://b.example/"}}, "appears twice"},
		{"duplicate unnamed", []Sink{{URL: "http://a.example/"}, {URL: "http://a.example/"}}, "appears twice"},
	}
	for _, tc := range cases {
		if err := d.SetSinks(tc.sinks...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: SetSinks = %v, want error containing %q", tc.name, err, tc.want)
		}
	}
	if _, ok := d.Stats()["keep"]; !ok {
		t.Error("a failed SetSinks changed the sinks")
	}
}

// TestSendToExplicitSinks: sinks passed to Send get the event, others do not.
func TestSendToExplicitSinks(t *testing.T) {
	registered, adhoc := &testSink{}, &testSink{}
	d, _ := newTestDispatcher(t, nil)
	if err := d.SetSinks(Sink{Name: "registered", URL: serve(t, registered)}); err != nil {
		t.Fatal(err)
	}
	only := Sink{Name: "adhoc", URL: serve(t, adhoc), Mode: ModeStructured}
	if err := d.Send(testEvent(t, TypeRevisionReady, 1), only); err != nil {
		t.Fatal(err)
	}
	if err := d.Send(testEvent(t, TypeRevisionReady, 2)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "events", func() bool { return len(adhoc.acceptedIDs()) == 2 && len(registered.acceptedIDs()) == 1 })
	if got, want := registered.acceptedIDs()[0], testEvent(t, TypeRevisionReady, 2).ID(); got != want {
		t.Errorf("registered sink got %s, want only the broadcast %s", got, want)
	}
	if err := d.Send(cloudevents.NewEvent()); err == nil {
		t.Error("Send accepted an invalid event")
	}
	if err := d.Send(testEvent(t, TypeRevisionReady, 3), Sink{URL: "nope"}); err == nil {
		t.Error("Send accepted an invalid sink")
	}
}

func TestCloseDrains(t *testing.T) {
	sink := &testSink{status: func(n int, _ cloudevents.Event) int {
		if n%2 == 0 {
			return http.StatusServiceUnavailable // every event needs a retry
		}
		return http.StatusOK
	}}
	d, _ := newTestDispatcher(t, nil)
	if err := d.SetSinks(Sink{Name: "s", URL: serve(t, sink)}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := d.Send(testEvent(t, TypeRevisionReady, i)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := len(sink.acceptedIDs()); n != 10 {
		t.Errorf("%d events delivered by Close, want 10", n)
	}
	if err := d.Send(testEvent(t, TypeRevisionReady, 11)); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
	if err := d.SetSinks(); !errors.Is(err, ErrClosed) {
		t.Errorf("SetSinks after Close = %v, want ErrClosed", err)
	}
	if err := d.Close(ctx); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// closeWithFourUndelivered queues 4 events for a sink that refuses
// connections, waits until delivery failed once, and closes d with a
// context already ended: the events are still queued.
func closeWithFourUndelivered(t *testing.T, d *Dispatcher) error {
	t.Helper()
	if err := d.SetSinks(Sink{Name: "down", URL: "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := d.Send(testEvent(t, TypeRevisionReady, i)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "a failed attempt", func() bool { return stats(d, "down").FailedAttempts > 0 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return d.Close(ctx)
}

func TestCloseDeadline(t *testing.T) {
	d, _ := newTestDispatcher(t, nil)
	err := closeWithFourUndelivered(t, d)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "4 events undelivered") {
		t.Errorf("Close = %v, want 4 events undelivered", err)
	}
	if got := testutil.ToFloat64(d.metrics.dropped.WithLabelValues("down", dropShutdown)); got != 4 {
		t.Errorf("dropped{shutdown} = %v, want 4", got)
	}
}

// TestSharedRegistry: two dispatchers may register on one registry.
func TestSharedRegistry(t *testing.T) {
	_, reg := newTestDispatcher(t, nil)
	if _, err := NewDispatcher(Options{Registerer: reg}); err != nil {
		t.Fatalf("second dispatcher on the same registry: %v", err)
	}
}
