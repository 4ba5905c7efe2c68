package events

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// newFifo is an empty queue with the dispatcher's bounds.
func (d *Dispatcher) newFifo() fifo {
	return fifo{limit: d.opts.QueueSize, maxBytes: d.opts.QueueBytes}
}

// markChanged tells the saver the state to keep changed.
func (w *worker) markChanged() {
	if w.d.opts.Store == nil {
		return
	}
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// restore merges the sink's saved state into the worker before it
// delivers anything: saved events go first (they are older), then those
// sent since the worker started, repeats left out. It retries a Store
// that does not answer until the worker is stopped, and reports whether
// it got the state. Without a Store there is nothing to read.
func (w *worker) restore() bool {
	store := w.d.opts.Store
	if store == nil {
		w.restored.Store(true)
		return true
	}
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(w.ctx, w.d.opts.AttemptTimeout)
		st, err := store.Load(ctx, w.key)
		cancel()
		if err == nil {
			w.merge(st)
			w.restored.Store(true)
			return true
		}
		if w.ctx.Err() != nil {
			return false
		}
		wait := backoff(attempt, w.d.opts.BackoffBase, w.d.opts.BackoffMax, rand.Float64())
		w.log.Warn("Reading the event sink's saved events failed; will retry before delivering", "retryIn", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-w.ctx.Done():
			t.Stop()
			return false
		}
	}
}

// merge puts st in front of what was queued since the worker started.
func (w *worker) merge(st State) {
	var unreadable int
	saved := make([]queued, 0, len(st.Events))
	for _, raw := range st.Events {
		var e cloudevents.Event
		if err := json.Unmarshal(raw, &e); err != nil {
			unreadable++
			w.log.Error("Dropped a saved event that does not decode", "err", err)
			continue
		}
		enqueued := e.Time()
		if enqueued.IsZero() {
			enqueued = time.Now()
		}
		saved = append(saved, queued{event: e, raw: raw, enqueued: enqueued})
	}

	w.mu.Lock()
	recent := newRecentIDs(w.d.opts.QueueSize)
	for _, id := range st.Recent {
		recent.add(id)
	}
	// The first saved event was in flight, outside the queue's bounds, as
	// it was when saved; it goes out first.
	var resumed *queued
	fresh, overflow, repeats, sinceStart := w.d.newFifo(), 0, 0, w.queue.len()
	seen := func(id string) bool {
		return recent.has(id) || fresh.has(id) || (resumed != nil && resumed.event.ID() == id)
	}
	for _, q := range saved {
		switch {
		case seen(q.event.ID()):
		case resumed == nil:
			resumed = &q
		default:
			overflow += len(fresh.push(q))
		}
	}
	for q, ok := w.queue.pop(); ok; q, ok = w.queue.pop() {
		if seen(q.event.ID()) {
			repeats++
			continue
		}
		overflow += len(fresh.push(q))
	}
	w.queue, w.recent, w.inFlight = fresh, recent, resumed
	depth := fresh.len()
	w.mu.Unlock()

	w.delivered.Add(st.Delivered)
	w.dropped.Add(st.Dropped)
	w.repeats.Add(int64(repeats))
	if overflow > 0 {
		w.drop(dropOverflow, overflow)
	}
	if unreadable > 0 {
		w.drop(dropUnreadable, unreadable)
	}
	w.d.metrics.depth.WithLabelValues(w.key).Set(float64(depth))
	if len(saved) > 0 {
		w.log.Info("Resuming delivery of saved events", "queued", depth, "delivered", st.Delivered, "dropped", st.Dropped)
	}
	if sinceStart > 0 || overflow > 0 || unreadable > 0 {
		w.markChanged()
	}
}

// snapshot is the state to keep now.
func (w *worker) snapshot() State {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := State{Recent: w.recent.list(), Delivered: w.delivered.Load(), Dropped: w.dropped.Load()}
	if w.inFlight != nil {
		st.Events = append(st.Events, w.inFlight.raw)
	}
	w.queue.each(func(q queued) { st.Events = append(st.Events, q.raw) })
	return st
}

// startSaver writes the state to the Store after each change, coalescing
// changes made while a write is under way, until the returned function is
// called: it stops the saver after a last write of what changed (or, for a
// removed sink, deletes the state) and waits for it. A write that fails is
// retried with backoff; a crash loses at most the changes of one write.
func (w *worker) startSaver() (stop func()) {
	store := w.d.opts.Store
	if store == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for attempt := 0; ; {
			select {
			case <-w.changed:
			case <-quit:
				w.saveLast()
				return
			}
			if err := w.save(); err != nil {
				wait := backoff(attempt, w.d.opts.BackoffBase, w.d.opts.BackoffMax, rand.Float64())
				attempt++
				w.log.Warn("Saving the event sink's undelivered events failed; will retry", "retryIn", wait, "err", err)
				w.markChanged()
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-quit:
					t.Stop()
					w.saveLast()
					return
				}
				continue
			}
			attempt = 0
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// saveLast runs as the worker exits: a removed sink's state is deleted;
// otherwise what changed since the last write is written.
func (w *worker) saveLast() {
	if w.forget() {
		return
	}
	select {
	case <-w.changed:
	default:
		return
	}
	if err := w.save(); err != nil {
		w.log.Error("Saving the event sink's undelivered events at exit failed; the last saved ones remain", "err", err)
	}
}

// forget deletes the saved state of a removed sink and reports whether
// the sink was removed.
func (w *worker) forget() bool {
	w.mu.Lock()
	removed := w.stopReason == dropRemoved
	w.mu.Unlock()
	if !removed || w.d.opts.Store == nil {
		return removed
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.d.opts.AttemptTimeout)
	defer cancel()
	if err := w.d.opts.Store.Delete(ctx, w.key); err != nil {
		w.log.Error("Deleting the removed event sink's saved state failed", "err", err)
	}
	return true
}

func (w *worker) save() error {
	ctx, cancel := context.WithTimeout(context.Background(), w.d.opts.AttemptTimeout)
	defer cancel()
	return w.d.opts.Store.Save(ctx, w.key, w.snapshot())
}
