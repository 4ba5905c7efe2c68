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

	mu          sync.Mutex
	sink        Sink
	queue       fifo
	draining    bool   // exit once the queue is empty
	overflowing bool   // dropping since the queue was last empty; logged once
	stopReason  string // why the queue is being abandoned

	delivered, failedAttempts, rejected, dropped atomic.Int64
	// denied is the egress policy's last refusal of this sink ("" for
	// none since the sink was set), for its EventSink's condition.
	denied atomic.Pointer[string]
	// lost counts events abandoned by stop, queued or in flight.
	lost atomic.Int64
}

func newWorker(d *Dispatcher, key string, s Sink) *worker {
	ctx, cancel := context.WithCancel(context.Background())
	return &worker{
		d: d, key: key, log: d.opts.Logger.With("sink", key),
		ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		sink:  s,
		queue: fifo{limit: d.opts.QueueSize},
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

// enqueue queues e if the sink's filter accepts it, dropping the oldest
// queued event when full. It never blocks.
func (w *worker) enqueue(e cloudevents.Event) {
	w.mu.Lock()
	if !w.sink.accepts(e.Type()) {
		w.mu.Unlock()
		return
	}
	oldest, overflow := w.queue.push(queued{event: e, enqueued: time.Now()})
	w.d.metrics.depth.WithLabelValues(w.key).Set(float64(w.queue.len()))
	warn := overflow && !w.overflowing
	w.overflowing = w.overflowing || overflow
	w.mu.Unlock()

	if overflow {
		w.drop(dropOverflow, 1)
		if warn {
			w.log.Warn("Event queue full; dropping the oldest events until the sink catches up",
				"queueSize", w.d.opts.QueueSize, "firstDroppedID", oldest.event.ID(), "firstDroppedType", oldest.event.Type())
		}
	}
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

// run delivers queued events until drained or stopped.
func (w *worker) run() {
	defer close(w.done)
	for {
		q, ok := w.next()
		if !ok {
			break
		}
		w.deliver(q)
	}
	w.mu.Lock()
	left, reason := w.queue.len(), w.stopReason
	w.queue = fifo{limit: w.queue.limit}
	w.mu.Unlock()
	if left > 0 {
		w.drop(reason, left)
		w.lost.Add(int64(left))
		w.log.Warn("Event sink stopped with events queued; dropped them", "dropped", left, "reason", reason)
	}
	w.d.metrics.depth.WithLabelValues(w.key).Set(0)
}

// next waits for the oldest queued event; false means exit.
func (w *worker) next() (queued, bool) {
	for {
		w.mu.Lock()
		if w.ctx.Err() != nil {
			w.mu.Unlock()
			return queued{}, false
		}
		q, ok := w.queue.pop()
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

// deliver sends q until the sink accepts it, rejects it for good, or the
// worker is stopped.
func (w *worker) deliver(q queued) {
	log := w.log.With("id", q.event.ID(), "type", q.event.Type())
	for attempt := 0; ; attempt++ {
		retry, err := w.attempt(q.event)
		if err == nil {
			w.denied.Store(nil) // the operator allowed the address since
			w.delivered.Add(1)
			w.d.metrics.delivered.WithLabelValues(w.key).Inc()
			w.d.metrics.latency.WithLabelValues(w.key).Observe(time.Since(q.enqueued).Seconds())
			log.Debug("Delivered event", "attempts", attempt+1)
			return
		}
		if w.ctx.Err() != nil {
			w.abandonInFlight(log)
			return
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
			log.Error("Egress policy refused the event sink's address; not retrying", "err", err)
			return
		}
		if !retry {
			w.rejected.Add(1)
			w.drop(dropRejected, 1)
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
			w.abandonInFlight(log)
			return
		}
	}
}

func (w *worker) abandonInFlight(log *slog.Logger) {
	w.mu.Lock()
	reason := w.stopReason
	w.mu.Unlock()
	w.drop(reason, 1)
	w.lost.Add(1)
	log.Warn("Event sink stopped during delivery; dropped the event", "reason", reason)
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
		Queued:         n,
		Denied:         deref(w.denied.Load()),
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
