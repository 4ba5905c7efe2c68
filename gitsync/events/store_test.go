package events

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// downSink reserves a loopback address nothing listens on; up starts s
// there, as a sink coming back.
func downSink(t *testing.T) (url string, up func(s *testSink)) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/events", func(s *testSink) {
		t.Helper()
		srv := httptest.NewUnstartedServer(s)
		srv.Listener.Close()
		eventually(t, "listening on "+addr+" again", func() bool {
			srv.Listener, err = net.Listen("tcp", addr)
			return err == nil
		})
		srv.Start()
		t.Cleanup(srv.Close)
	}
}

// restart closes d at once, as a process being stopped, and returns a new
// Dispatcher on the same store with the same sink set.
func restart(t *testing.T, d *Dispatcher, store Store, sinks ...Sink) *Dispatcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatalf("Close with a store: %v, want the undelivered events kept", err)
	}
	next, _ := newTestDispatcher(t, func(o *Options) { o.Store = store })
	if err := next.SetSinks(sinks...); err != nil {
		t.Fatal(err)
	}
	return next
}

// TestUndeliveredEventsSurviveRestart: events for a sink that is down
// outlive the dispatcher; the next one, on the same store, delivers them
// in order with their original ids once the sink is back, and counts them.
func TestUndeliveredEventsSurviveRestart(t *testing.T) {
	store := &memStore{}
	url, up := downSink(t)
	sink := Sink{Name: "ns/ci", URL: url}
	d, _ := newTestDispatcher(t, func(o *Options) { o.Store = store })
	if err := d.SetSinks(sink); err != nil {
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
	eventually(t, "the five events saved", func() bool {
		st, _ := store.state(t, sink.Name)
		return len(st.Events) == 5 && stats(d, sink.Name).FailedAttempts > 0
	})

	d = restart(t, d, store, sink)
	got := &testSink{}
	up(got)
	eventually(t, "the saved events delivered", func() bool { return len(got.acceptedIDs()) == 5 })
	if diff := cmp.Diff(ids, got.acceptedIDs()); diff != "" {
		t.Errorf("delivered after the restart (-want +got):\n%s", diff)
	}
	eventually(t, "the state saved empty", func() bool {
		st, _ := store.state(t, sink.Name)
		return len(st.Events) == 0 && st.Delivered == 5
	})
	if s := stats(d, sink.Name); s.Delivered != 5 || s.Dropped != 0 || !s.Restored {
		t.Errorf("stats = %+v, want 5 delivered, restored", s)
	}
}

// TestRepeatSentOnce: the same occurrence announced again — at every
// resync, and after a restart — has the same id and reaches the sink once.
func TestRepeatSentOnce(t *testing.T) {
	store := &memStore{}
	got := &testSink{}
	sink := Sink{Name: "ns/ci", URL: serve(t, got)}
	d, _ := newTestDispatcher(t, func(o *Options) { o.Store = store })
	if err := d.SetSinks(sink); err != nil {
		t.Fatal(err)
	}
	failed := testEvent(t, TypeSyncFailed, 1)
	for range 7 {
		if err := d.Send(failed); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the event delivered", func() bool { return stats(d, sink.Name).Delivered == 1 })
	}
	if s := stats(d, sink.Name); s.Repeats != 6 {
		t.Errorf("repeats = %d, want 6", s.Repeats)
	}
	eventually(t, "the id saved", func() bool {
		st, _ := store.state(t, sink.Name)
		return len(st.Recent) == 1
	})

	d = restart(t, d, store, sink)
	if err := d.Send(failed); err != nil {
		t.Fatal(err)
	}
	next := testEvent(t, TypeSyncFailed, 2)
	if err := d.Send(next); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the next event", func() bool { return len(got.acceptedIDs()) == 2 })
	if diff := cmp.Diff([]string{failed.ID(), next.ID()}, got.acceptedIDs()); diff != "" {
		t.Errorf("accepted (-want +got):\n%s", diff)
	}
}

// TestSavedQueueBounded: over QueueSize the oldest events are dropped,
// the saved state holds the rest, and the dropped count survives the
// restart.
func TestSavedQueueBounded(t *testing.T) {
	store := &memStore{}
	url, up := downSink(t)
	sink := Sink{Name: "ns/ci", URL: url}
	small := func(o *Options) { o.Store, o.QueueSize = store, 3 }
	d, _ := newTestDispatcher(t, small)
	if err := d.SetSinks(sink); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 6 {
		e := testEvent(t, TypeRevisionReady, i)
		ids = append(ids, e.ID())
		if err := d.Send(e); err != nil {
			t.Fatal(err)
		}
		if i == 0 { // the first is in flight, outside the queue's bound
			eventually(t, "a failed attempt", func() bool { return stats(d, sink.Name).FailedAttempts > 0 })
		}
	}
	want := []string{ids[0], ids[3], ids[4], ids[5]}
	eventually(t, "the bounded state saved", func() bool {
		st, _ := store.state(t, sink.Name)
		return st.Dropped == 2 && len(st.Events) == 4
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	d, _ = newTestDispatcher(t, small)
	if err := d.SetSinks(sink); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the state restored", func() bool { return stats(d, sink.Name).Restored })
	if s := stats(d, sink.Name); s.Dropped != 2 {
		t.Errorf("dropped after the restart = %d, want 2", s.Dropped)
	}
	got := &testSink{}
	up(got)
	eventually(t, "the kept events", func() bool { return len(got.acceptedIDs()) == len(want) })
	if diff := cmp.Diff(want, got.acceptedIDs()); diff != "" {
		t.Errorf("accepted (-want +got):\n%s", diff)
	}
}

// TestStoreDownAtStart: a store that does not answer delays delivery, it
// does not lose the saved events nor overwrite them.
func TestStoreDownAtStart(t *testing.T) {
	var down atomic.Bool
	store := &memStore{fail: down.Load}
	got := &testSink{}
	sink := Sink{Name: "ns/ci", URL: serve(t, got)}
	old := testEvent(t, TypeRevisionReady, 1)
	raw, err := old.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(context.Background(), sink.Name, State{Events: []json.RawMessage{raw}, Delivered: 3}); err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	d, _ := newTestDispatcher(t, func(o *Options) { o.Store = store })
	if err := d.SetSinks(sink); err != nil {
		t.Fatal(err)
	}
	fresh := testEvent(t, TypeRevisionReady, 2)
	if err := d.Send(fresh); err != nil {
		t.Fatal(err)
	}
	eventually(t, "several failed loads", func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		return store.loads >= 3
	})
	if s := stats(d, sink.Name); s.Restored || s.Delivered != 0 || len(got.acceptedIDs()) != 0 {
		t.Fatalf("delivered before the saved state was read: %+v", s)
	}
	down.Store(false)
	eventually(t, "both events", func() bool { return len(got.acceptedIDs()) == 2 })
	if diff := cmp.Diff([]string{old.ID(), fresh.ID()}, got.acceptedIDs()); diff != "" {
		t.Errorf("accepted (-want +got):\n%s", diff)
	}
	eventually(t, "the counts", func() bool { return stats(d, sink.Name).Delivered == 5 })
}

// TestRemovedSinkStateDeleted: removing a sink deletes its saved state,
// and the first SetSinks deletes the states of sinks removed while no
// dispatcher ran.
func TestRemovedSinkStateDeleted(t *testing.T) {
	store := &memStore{}
	for _, name := range []string{"ns/gone", "ns/kept"} {
		if err := store.Save(context.Background(), name, State{Delivered: 1}); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := newTestDispatcher(t, func(o *Options) { o.Store = store })
	kept := Sink{Name: "ns/kept", URL: serve(t, &testSink{})}
	if err := d.SetSinks(kept); err != nil {
		t.Fatal(err)
	}
	if names, _ := store.Sinks(context.Background()); !cmp.Equal(names, []string{"ns/kept"}) {
		t.Errorf("saved states after the first SetSinks = %v, want ns/kept alone", names)
	}
	if err := d.SetSinks(); err != nil {
		t.Fatal(err)
	}
	if names, _ := store.Sinks(context.Background()); len(names) != 0 {
		t.Errorf("saved states after removing every sink = %v", names)
	}
}

// TestCloseKeepsWithStore: with a store, events Close could not deliver
// are kept, not lost: no error, nothing counted dropped.
func TestCloseKeepsWithStore(t *testing.T) {
	store := &memStore{}
	d, _ := newTestDispatcher(t, func(o *Options) { o.Store = store })
	if err := closeWithFourUndelivered(t, d); errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v, want the events kept, not lost", err)
	}
	if st, _ := store.state(t, "down"); len(st.Events) != 4 || st.Dropped != 0 {
		t.Errorf("saved state = %d events, %d dropped; want 4 and 0", len(st.Events), st.Dropped)
	}
}
