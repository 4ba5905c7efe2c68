package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
)

// ErrClosed is returned by Send and SetSinks after Close.
var ErrClosed = errors.New("event dispatcher is closed")

// Dispatcher delivers CloudEvents to sinks, at least once and in order per
// sink, without ever blocking the sender. It is safe for concurrent use.
type Dispatcher struct {
	opts    Options
	client  cloudevents.Client
	metrics *metrics

	// setMu serializes SetSinks, which waits for removed workers outside mu.
	setMu sync.Mutex
	// pruned says SetSinks deleted the saved states of sinks removed
	// while no Dispatcher ran; guarded by setMu.
	pruned bool
	// mu guards workers and closed; Send holds it only to enqueue.
	mu      sync.Mutex
	workers map[string]*worker
	closed  bool
}

// SinkStats counts one sink's deliveries since it was added.
type SinkStats struct {
	// Sink as last set.
	Sink Sink
	// Delivered events, acknowledged with a 2xx.
	Delivered int64
	// FailedAttempts counts every attempt that did not end in a 2xx.
	FailedAttempts int64
	// Rejected events were answered with a 4xx other than 408/429 and not retried.
	Rejected int64
	// Dropped events will never be delivered: overflow, rejection,
	// removal or shutdown. It includes Rejected.
	Dropped int64
	// Repeats are events not queued because the sink already had one
	// with the same id: queued, in flight, or settled lately.
	Repeats int64
	// Queued events wait for delivery now, the one in flight excluded.
	Queued int
	// Denied is the egress policy's last refusal of the sink's address at
	// delivery, "" when there was none since its URL last changed.
	Denied string
	// Restored is false while the sink's saved state is being read from
	// the Store: until then Delivered and Dropped count this run only.
	Restored bool
}

// CheckSink says whether the egress policy lets s be delivered to, as far
// as can be known before sending: its scheme, and the addresses its host
// is or resolves to now. Each connection is checked again when made.
func (d *Dispatcher) CheckSink(ctx context.Context, s Sink) error {
	if d.opts.Egress == nil {
		return nil
	}
	return d.opts.Egress().CheckResolved(ctx, s.URL)
}

// NewDispatcher validates opts and returns a Dispatcher with no sinks.
func NewDispatcher(opts Options) (*Dispatcher, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	p, err := cehttp.New(cehttp.WithClient(*opts.HTTPClient))
	if err != nil {
		return nil, fmt.Errorf("creating CloudEvents HTTP protocol: %w", err)
	}
	c, err := cloudevents.NewClient(p)
	if err != nil {
		return nil, fmt.Errorf("creating CloudEvents client: %w", err)
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	return &Dispatcher{opts: opts, client: c, metrics: m, workers: map[string]*worker{}}, nil
}

// SetSinks makes sinks the complete set: new ones get a worker, changed
// ones (same Name, or URL when unnamed) take effect from their next
// delivery attempt with their queue kept, and missing ones are stopped,
// their queued events dropped. It returns once removed workers have
// stopped. Invalid or duplicate sinks fail the whole call, changing nothing.
func (d *Dispatcher) SetSinks(sinks ...Sink) error {
	want := make(map[string]Sink, len(sinks))
	for _, s := range sinks {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("setting event sinks: %w", err)
		}
		if _, dup := want[s.key()]; dup {
			return fmt.Errorf("setting event sinks: sink %q appears twice", s.key())
		}
		want[s.key()] = s.withDefaults()
	}

	d.setMu.Lock()
	defer d.setMu.Unlock()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	var removed []*worker
	for key, w := range d.workers {
		if _, keep := want[key]; !keep {
			delete(d.workers, key)
			removed = append(removed, w)
		}
	}
	for key, s := range want {
		d.upsertLocked(key, s)
	}
	d.mu.Unlock()

	for _, w := range removed {
		w.stop(dropRemoved)
	}
	for _, w := range removed {
		<-w.done
		d.metrics.forget(w.key)
	}
	if !d.pruned {
		d.pruned = d.prune(want)
	}
	return nil
}

// prune deletes the saved states of sinks not in want: they were removed
// while no Dispatcher ran. It reports whether it could list them; a
// failure is logged and retried at the next SetSinks.
func (d *Dispatcher) prune(want map[string]Sink) bool {
	if d.opts.Store == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.opts.AttemptTimeout)
	defer cancel()
	saved, err := d.opts.Store.Sinks(ctx)
	if err != nil {
		d.opts.Logger.Warn("Listing saved event sink states failed; will retry", "err", err)
		return false
	}
	for _, key := range saved {
		if _, keep := want[key]; keep {
			continue
		}
		d.opts.Logger.Info("Deleting the saved events of a removed event sink", "sink", key)
		if err := d.opts.Store.Delete(ctx, key); err != nil {
			d.opts.Logger.Warn("Deleting a removed event sink's saved events failed", "sink", key, "err", err)
		}
	}
	return true
}

// upsertLocked starts a worker for s or updates the existing one. d.mu is held.
func (d *Dispatcher) upsertLocked(key string, s Sink) *worker {
	if w, ok := d.workers[key]; ok {
		w.setSink(s)
		return w
	}
	w := newWorker(d, key, s)
	d.workers[key] = w
	go w.run()
	d.opts.Logger.Info("Added event sink", "sink", key, "url", s.URL, "mode", s.Mode)
	return w
}

// Send queues e for delivery and returns at once. With no sinks given it
// goes to every sink set with SetSinks whose filter accepts e's type; with
// sinks given, to those (filters applied) — each is added, or updated, as
// if by SetSinks, and stays until a SetSinks call leaves it out. An error
// means e was queued nowhere: it is invalid, a sink is invalid, or the
// Dispatcher is closed.
func (d *Dispatcher) Send(e cloudevents.Event, sinks ...Sink) error {
	if err := e.Validate(); err != nil {
		return fmt.Errorf("sending event %s: %w", e.ID(), err)
	}
	for _, s := range sinks {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("sending event %s: %w", e.ID(), err)
		}
	}
	e = e.Clone()
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("sending event %s: encoding: %w", e.ID(), err)
	}
	q := queued{event: e, raw: raw, enqueued: time.Now()}

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	if len(sinks) == 0 {
		for _, w := range d.workers {
			w.enqueue(q)
		}
		return nil
	}
	sent := make(map[string]bool, len(sinks))
	for _, s := range sinks {
		if key := s.key(); s.accepts(e.Type()) && !sent[key] {
			sent[key] = true
			d.upsertLocked(key, s.withDefaults()).enqueue(q)
		}
	}
	return nil
}

// Stats returns every sink's counters, by sink Name (or URL when unnamed).
func (d *Dispatcher) Stats() map[string]SinkStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]SinkStats, len(d.workers))
	for key, w := range d.workers {
		out[key] = w.stats()
	}
	return out
}

// Close stops accepting events and delivers what is queued, retrying as
// usual, until every queue is empty or ctx is done. Then it stops the
// workers — with a Store, their undelivered events stay saved for the
// next start — and returns an error counting the events lost.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	workers := make([]*worker, 0, len(d.workers))
	for _, w := range d.workers {
		workers = append(workers, w)
	}
	d.mu.Unlock()

	for _, w := range workers {
		w.drain()
	}
	drained := make(chan struct{})
	go func() {
		for _, w := range workers {
			<-w.done
		}
		close(drained)
	}()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
	}
	for _, w := range workers {
		w.stop(dropShutdown)
	}
	<-drained
	var lost int64
	for _, w := range workers {
		lost += w.lost.Load()
	}
	if lost == 0 {
		return nil
	}
	return fmt.Errorf("closing event dispatcher: %d events undelivered: %w", lost, ctx.Err())
}
