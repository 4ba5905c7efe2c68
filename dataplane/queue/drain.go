package queue

import (
	"context"
	"sync/atomic"
	"time"
)

// drainer is the queue's shutdown state. Once draining, probes answer
// unready so Kubernetes (or knit's local runtime) takes the replica out of
// its endpoints, while requests that still arrive are served; each one
// restarts the quiet period waitQuiet waits for.
type drainer struct {
	base        time.Time
	draining    atomic.Bool
	lastRequest atomic.Int64 // nanoseconds since base; written only while draining
}

func newDrainer() *drainer { return &drainer{base: time.Now()} }

// Draining reports whether shutdown has begun.
func (d *drainer) Draining() bool { return d.draining.Load() }

// start begins draining; safe to call more than once.
func (d *drainer) start() {
	if d.draining.Load() {
		return
	}
	d.lastRequest.Store(int64(time.Since(d.base)))
	d.draining.Store(true)
}

// touch notes a request; it costs one atomic load unless draining.
func (d *drainer) touch() {
	if d.draining.Load() {
		d.lastRequest.Store(int64(time.Since(d.base)))
	}
}

// waitQuiet starts draining and returns once no request has arrived for
// quiet, or when ctx ends.
func (d *drainer) waitQuiet(ctx context.Context, quiet time.Duration) {
	d.start()
	for {
		idle := time.Since(d.base) - time.Duration(d.lastRequest.Load())
		if idle >= quiet {
			return
		}
		t := time.NewTimer(quiet - idle)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
