package queue

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// drainer is the queue's shutdown state. Once draining, probes answer
// unready so Kubernetes (or knit's local runtime) takes the replica out of
// its endpoints, while requests that still arrive are served; each one
// restarts the quiet period waitQuiet waits for. Only the queue-proxy's
// own shutdown starts it (Server.Serve); the preStop hook only waits for
// it (Server.waitForDrain), so no call to the admin port can make a
// replica unready.
type drainer struct {
	base        time.Time
	draining    atomic.Bool
	lastRequest atomic.Int64 // nanoseconds since base; written only while draining

	mu        sync.Mutex
	cancelled chan struct{} // closed by cancel; made anew by each start
}

func newDrainer() *drainer { return &drainer{base: time.Now()} }

// Draining reports whether shutdown has begun.
func (d *drainer) Draining() bool { return d.draining.Load() }

// start begins draining; safe to call more than once. It returns the
// channel cancel closes.
func (d *drainer) start() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.draining.Load() {
		d.cancelled = make(chan struct{})
		d.lastRequest.Store(int64(time.Since(d.base)))
		d.draining.Store(true)
	}
	return d.cancelled
}

// cancel ends a drain that was not a shutdown: probes answer ready again
// and waitQuiet returns at once.
func (d *drainer) cancel() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining.Load() {
		d.draining.Store(false)
		close(d.cancelled)
	}
}

// touch notes a request; it costs one atomic load unless draining.
func (d *drainer) touch() {
	if d.draining.Load() {
		d.lastRequest.Store(int64(time.Since(d.base)))
	}
}

// waitQuiet starts draining and returns once no request has arrived for
// quiet, or when ctx ends; cancelled reports that cancel ended the drain.
func (d *drainer) waitQuiet(ctx context.Context, quiet time.Duration) (cancelled bool) {
	stop := d.start()
	for {
		idle := time.Since(d.base) - time.Duration(d.lastRequest.Load())
		if idle >= quiet {
			return false
		}
		t := time.NewTimer(quiet - idle)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-stop:
			t.Stop()
			return true
		case <-t.C:
		}
	}
}
