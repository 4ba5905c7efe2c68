package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/knitops/knit/gitsync/egress"
)

// worker delivers one sink's events, one at a time, in queue order.
type worker struct {
	d   *Dispatcher
	key string
	log *slog.Logger

	ctx    context.Context // canceled by stop: abandon the queue
	cancel context.CancelFunc
	wake   chan struct{} // an event was queued, or drain was asked
	done   chan struct{} // closed when run returns
	// changed says the state a Store keeps changed since it was last
	// written; the saver (persist.go) coalesces changes into one write.
	changed chan struct{}

	mu    sync.Mutex
	sink  Sink
	queue fifo
	// inFlight is the event being delivered, kept in the saved state until
	// the sink takes it: at least once, across restarts too.
	inFlight    *queued
	recent      recentIDs // ids settled lately, to send a repeat once
	draining    bool      // exit once the queue is empty
	overflowing bool      // dropping since the queue was last empty; logged once
	stopReason  string    // why the queue is being abandoned

	delivered, failedAttempts, rejected, dropped, repeats atomic.Int64
	// restored is set once the Store's state is merged in (at once
	// without a Store): before, the counts cover this run only.
	restored atomic.Bool
	// denied is the egress policy's last refusal of this sink ("" for
	// none since the sink was set), for its EventSink's condition.
	denied atomic.Pointer[string]
	// lost counts events abandoned by stop, queued or in flight, and not
	// kept by a Store.
	lost atomic.Int64
}

func newWorker(d *Dispatcher, key string, s Sink) *worker {
	ctx, cancel := context.WithCancel(context.Background())
	return &worker{
		d: d, key: key, log: d.opts.Logger.With("sink", key),
		ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), done: make(chan struct{}), changed: make(chan struct{}, 1),
		sink:   s,
		queue:  d.newFifo(),
		recent: newRecentIDs(d.opts.QueueSize),
	}
}

func (w *worker) setSink(s Sink) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sink.URL != s.URL || w.sink.Mode != s.Mode {
		w.log.Info("Updated event sink", "url", s.URL, "mode", s.Mode)
		w.denied.Store(nil) // a new address gets a new verdict
	}
	w.sink = s
}

func (w *worker) config() Sink {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sink
}

// enqueue queues q if the sink's filter accepts it and it is not a
// repeat (queued, in flight, or settled lately), dropping the oldest
// queued events when full. It never blocks.
func (w *worker) enqueue(q queued) {
	id := q.event.ID()
	w.mu.Lock()
	if !w.sink.accepts(q.event.Type()) {
		w.mu.Unlock()
		return
	}
	if w.queue.has(id) || w.recent.has(id) || (w.inFlight != nil && w.inFlight.event.ID() == id) {
		w.mu.Unlock()
		w.repeats.Add(1)
		w.log.Debug("Event already queued or sent; not sending it again", "id", id, "type", q.event.Type())
		return
	}
	dropped := w.queue.push(q)
	w.d.metrics.depth.WithLabelValues(w.key).Set(float64(w.queue.len()))
	warn := len(dropped) > 0 && !w.overflowing
	w.overflowing = w.overflowing || len(dropped) > 0
	w.mu.Unlock()

	if len(dropped) > 0 {
		w.drop(dropOverflow, len(dropped))
		if warn {
			w.log.Warn("Event queue full; dropping the oldest events until the sink catches up",
				"queueSize", w.d.opts.QueueSize, "queueBytes", w.d.opts.QueueBytes,
				"firstDroppedID", dropped[0].event.ID(), "firstDroppedType", dropped[0].event.Type())
		}
	}
	w.markChanged()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// drain asks the worker to exit once its queue is empty.
func (w *worker) drain() {
	w.mu.Lock()
	w.draining = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// stop abandons the queue and the delivery in flight; reason labels the
// dropped events.
func (w *worker) stop(reason string) {
	w.mu.Lock()
	w.stopReason = reason
	w.mu.Unlock()
	w.cancel()
}

func (w *worker) drop(reason string, n int) {
	w.dropped.Add(int64(n))
	w.d.metrics.dropped.WithLabelValues(w.key, reason).Add(float64(n))
}

// run restores the sink's saved state, then delivers queued events until
// drained or stopped, then keeps or drops what is left.
func (w *worker) run() {
	defer close(w.done)
	if !w.restore() { // stopped before the Store answered: nothing to keep
		w.finish(false)
		w.forget()
		return
	}
	saved := w.startSaver()
	for {
		q, ok := w.next()
		if !ok {
			break
		}
		w.deliver(q)
	}
	w.finish(w.d.opts.Store != nil)
	saved()
}

// finish accounts for the events left when the worker exits: a Store
// keeps them for the next start unless the sink was removed; otherwise
// they are dropped and counted.
func (w *worker) finish(keep bool) {
	w.mu.Lock()
	left, reason := w.queue.len(), w.stopReason
	if w.inFlight != nil {
		left++
	}
	keep = keep && reason != dropRemoved
	if !keep {
		w.queue, w.inFlight = w.d.newFifo(), nil
	}
	w.mu.Unlock()
	w.d.metrics.depth.WithLabelValues(w.key).Set(0)
	switch {
	case left == 0:
	case keep:
		w.log.Info("Event sink stopped with events undelivered; kept them for the next start", "kept", left, "reason", reason)
	default:
		w.drop(reason, left)
		w.lost.Add(int64(left))
		w.log.Warn("Event sink stopped with events queued; dropped them", "dropped", left, "reason", reason)
	}
}

// next waits for the oldest queued event, which becomes the one in
// flight; false means exit.
func (w *worker) next() (queued, bool) {
	for {
		w.mu.Lock()
		if w.ctx.Err() != nil {
			w.mu.Unlock()
			return queued{}, false
		}
		if w.inFlight != nil { // resumed from the saved state
			q := *w.inFlight
			w.mu.Unlock()
			return q, true
		}
		q, ok := w.queue.pop()
		if ok {
			w.inFlight = &q
		}
		w.d.metrics.depth.WithLabelValues(w.key).Set(float64(w.queue.len()))
		if w.queue.len() == 0 {
			w.overflowing = false
		}
		draining := w.draining
		w.mu.Unlock()
		if ok {
			return q, true
		}
		if draining {
			return queued{}, false
		}
		select {
		case <-w.wake:
		case <-w.ctx.Done():
			return queued{}, false
		}
	}
}

// settle ends the delivery in flight: the sink took it, or never will.
// Its id is remembered, so the same occurrence announced again is not.
func (w *worker) settle(q queued) {
	w.mu.Lock()
	w.inFlight = nil
	w.recent.add(q.event.ID())
	w.mu.Unlock()
	w.markChanged()
}

// deliver sends q until the sink accepts it, rejects it for good, or the
// worker is stopped.
func (w *worker) deliver(q queued) {
	log := w.log.With("id", q.event.ID(), "type", q.event.Type())
	for attempt := 0; ; attempt++ {
		retry, err := w.attempt(q.event)
		if err == nil {
			w.denied.Store(nil) // the operator allowed the address since
			w.delivered.Add(1)
			w.settle(q)
			w.d.metrics.delivered.WithLabelValues(w.key).Inc()
			w.d.metrics.latency.WithLabelValues(w.key).Observe(time.Since(q.enqueued).Seconds())
			log.Debug("Delivered event", "attempts", attempt+1)
			return
		}
		if w.ctx.Err() != nil {
			return // stopped: finish keeps or drops the event in flight
		}
		w.failedAttempts.Add(1)
		w.d.metrics.failed.WithLabelValues(w.key).Inc()
		var denied *egress.DeniedError
		if errors.As(err, &denied) {
			// The policy will refuse every retry too: the EventSink's
			// condition says so and an operator may allow the address.
			msg := denied.Error()
			w.denied.Store(&msg)
			w.drop(dropDenied, 1)
			w.settle(q)
			log.Error("Egress policy refused the event sink's address; not retrying", "err", err)
			return
		}
		if !retry {
			w.rejected.Add(1)
			w.drop(dropRejected, 1)
			w.settle(q)
			log.Error("Event sink rejected event; not retrying", "err", err)
			return
		}
		wait := backoff(attempt, w.d.opts.BackoffBase, w.d.opts.BackoffMax, rand.Float64())
		log.Warn("Delivering event failed; will retry", "attempt", attempt+1, "retryIn", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-w.ctx.Done():
			t.Stop()
			return
		}
	}
}

// attempt makes one delivery. retry says whether a failure is worth
// retrying: network errors, 5xx, 408 and 429 are; other answers are not.
func (w *worker) attempt(e cloudevents.Event) (retry bool, err error) {
	s := w.config()
	ctx, cancel := context.WithTimeout(w.ctx, w.d.opts.AttemptTimeout)
	defer cancel()
	ctx = cloudevents.ContextWithTarget(ctx, s.URL)
	if s.Mode == ModeStructured {
		ctx = binding.WithForceStructured(ctx)
	} else {
		ctx = binding.WithForceBinary(ctx)
	}
	res := w.d.client.Send(ctx, e)
	if cloudevents.IsACK(res) {
		return false, nil
	}
	var hr *cehttp.Result
	if errors.As(res, &hr) {
		code := hr.StatusCode
		retry = code >= 500 || code == http.StatusRequestTimeout || code == http.StatusTooManyRequests
		return retry, fmt.Errorf("POST %s: %w", s.URL, res)
	}
	if cloudevents.IsNACK(res) {
		return true, fmt.Errorf("POST %s: %w", s.URL, res) // no answer: network error or timeout
	}
	return false, fmt.Errorf("encoding event for %s: %w", s.URL, res)
}

func (w *worker) stats() SinkStats {
	w.mu.Lock()
	s, n := w.sink, w.queue.len()
	w.mu.Unlock()
	return SinkStats{
		Sink:           s,
		Delivered:      w.delivered.Load(),
		FailedAttempts: w.failedAttempts.Load(),
		Rejected:       w.rejected.Load(),
		Dropped:        w.dropped.Load(),
		Repeats:        w.repeats.Load(),
		Queued:         n,
		Restored:       w.restored.Load(),
		Denied:         deref(w.denied.Load()),
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
