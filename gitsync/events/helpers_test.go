package events

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/prometheus/client_golang/prometheus"
)

// attempt is one request a test sink saw.
type attempt struct {
	id       string
	encoding binding.Encoding
	status   int
}

// testSink is an HTTP sink that parses requests with sdk-go and answers
// what status says (200 when nil) for the n-th request (0-based).
type testSink struct {
	status func(n int, e cloudevents.Event) int
	// before, when set, runs before answering, outside the lock: tests
	// block a delivery in flight with it.
	before func(e cloudevents.Event)

	mu       sync.Mutex
	attempts []attempt
	accepted []cloudevents.Event
	headers  []http.Header
}

func (s *testSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	msg := cehttp.NewMessageFromHttpRequest(r)
	enc := msg.ReadEncoding()
	e, err := binding.ToEvent(r.Context(), msg)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.before != nil {
		s.before(*e)
	}
	s.mu.Lock()
	status := http.StatusOK
	if s.status != nil {
		status = s.status(len(s.attempts), *e)
	}
	s.attempts = append(s.attempts, attempt{id: e.ID(), encoding: enc, status: status})
	s.headers = append(s.headers, r.Header.Clone())
	if status/100 == 2 {
		s.accepted = append(s.accepted, *e)
	}
	s.mu.Unlock()
	w.WriteHeader(status)
}

func (s *testSink) attemptIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, len(s.attempts))
	for i, a := range s.attempts {
		ids[i] = a.id
	}
	return ids
}

func (s *testSink) acceptedIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, len(s.accepted))
	for i, e := range s.accepted {
		ids[i] = e.ID()
	}
	return ids
}

// serve starts s on 127.0.0.1 and returns its URL.
func serve(t *testing.T, s *testSink) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

// newTestDispatcher returns a Dispatcher with tiny backoffs, closed when
// the test ends, and its metrics registry.
func newTestDispatcher(t *testing.T, mutate func(*Options)) (*Dispatcher, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts := Options{BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond, AttemptTimeout: 5 * time.Second, Registerer: reg}
	if mutate != nil {
		mutate(&opts)
	}
	d, err := NewDispatcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = d.Close(ctx)
	})
	return d, reg
}

// testEvent builds a distinct revision event numbered i.
func testEvent(t *testing.T, typ string, i int) cloudevents.Event {
	t.Helper()
	e, err := NewEvent(Occurrence{
		Type:     typ,
		Resource: Resource{Kind: "Revision", Namespace: "default", Name: fmt.Sprintf("shop-%07x", i)},
		Data:     Data{Repo: "shop", Branch: "main", Commit: fmt.Sprintf("%040x", i), Revision: fmt.Sprintf("shop-%07x", i)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// eventually polls cond until it holds, failing the test after a generous
// bound that only a hung test reaches.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func stats(d *Dispatcher, name string) SinkStats {
	return d.Stats()[name]
}

// memStore is a Store in memory, as a restart sees it: states are copied
// in and out through their JSON form. fail, when set, makes Load and Save
// fail while it returns true.
type memStore struct {
	mu     sync.Mutex
	states map[string][]byte
	loads  int
	fail   func() bool
}

func (m *memStore) Load(_ context.Context, sink string) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	if m.fail != nil && m.fail() {
		return State{}, fmt.Errorf("store down")
	}
	var st State
	if b, ok := m.states[sink]; ok {
		if err := json.Unmarshal(b, &st); err != nil {
			return State{}, err
		}
	}
	return st, nil
}

func (m *memStore) Save(_ context.Context, sink string, st State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil && m.fail() {
		return fmt.Errorf("store down")
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if m.states == nil {
		m.states = map[string][]byte{}
	}
	m.states[sink] = b
	return nil
}

func (m *memStore) Delete(_ context.Context, sink string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.states, sink)
	return nil
}

func (m *memStore) Sinks(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.states)), nil
}

// state is what m holds for sink.
func (m *memStore) state(t *testing.T, sink string) (State, bool) {
	t.Helper()
	m.mu.Lock()
	b, ok := m.states[sink]
	m.mu.Unlock()
	var st State
	if ok {
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
	}
	return st, ok
}
