package queue

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
)

// OverloadError is returned when every slot is taken and the queue is full.
type OverloadError struct {
	InFlight, Queued, Capacity int
}

func (e *OverloadError) Error() string {
	return fmt.Sprintf("queue-proxy: overloaded: %d requests in flight and %d queued for containerConcurrency=%d",
		e.InFlight, e.Queued, e.Capacity)
}

// Breaker enforces containerConcurrency: at most capacity requests hold a
// slot, at most depth more wait for one, in arrival order; the rest are
// refused at once. Acquire and Release are a CAS on one packed word when a
// slot is free; waiting parks on a channel, which serves receivers FIFO.
type Breaker struct {
	capacity, depth uint32
	// state packs the requests holding a slot (low 32 bits) and the
	// waiters no slot has been handed to yet (high 32 bits).
	state atomic.Uint64
	// handoff carries a slot from a releasing request to a waiter.
	handoff chan struct{}
}

// NewBreaker returns a breaker with capacity slots and room for depth
// waiters. Both must be positive.
func NewBreaker(capacity, depth int) *Breaker {
	if capacity < 1 || depth < 1 {
		panic(fmt.Sprintf("queue.NewBreaker(%d, %d): capacity and depth must be positive", capacity, depth))
	}
	return &Breaker{capacity: uint32(capacity), depth: uint32(depth), handoff: make(chan struct{}, depth)}
}

const waiterUnit = 1 << 32

func unpack(s uint64) (active, waiting uint32) { return uint32(s), uint32(s >> 32) }

// InFlight is the number of requests holding a slot.
func (b *Breaker) InFlight() int { a, _ := unpack(b.state.Load()); return int(a) }

// Queued is the number of requests waiting for a slot.
func (b *Breaker) Queued() int { _, w := unpack(b.state.Load()); return int(w) }

// Capacity is the number of slots.
func (b *Breaker) Capacity() int { return int(b.capacity) }

// Acquire takes a slot, waiting in line if none is free. It returns an
// *OverloadError if the line is full, or the context's cause if ctx ends
// first. Every nil return must be paired with one Release.
func (b *Breaker) Acquire(ctx context.Context) error {
	for {
		s := b.state.Load()
		active, waiting := unpack(s)
		if active < b.capacity {
			if b.state.CompareAndSwap(s, s+1) {
				return nil
			}
			continue
		}
		if waiting >= b.depth {
			return &OverloadError{InFlight: int(active), Queued: int(waiting), Capacity: int(b.capacity)}
		}
		if b.state.CompareAndSwap(s, s+waiterUnit) {
			break
		}
	}
	select {
	case <-b.handoff:
		return nil
	case <-ctx.Done():
	}
	// Leave the line. While some waiter is still unserved, the count can
	// drop by one. If none is, a slot is already on its way to the waiters
	// counting this one: take it and pass it on.
	for {
		s := b.state.Load()
		if _, waiting := unpack(s); waiting > 0 {
			if b.state.CompareAndSwap(s, s-waiterUnit) {
				return context.Cause(ctx)
			}
			continue
		}
		select {
		case <-b.handoff:
			b.Release()
			return context.Cause(ctx)
		default:
			// A Release is between its CAS and its send.
			runtime.Gosched()
		}
	}
}

// Release frees a slot, handing it straight to the first waiter if any.
func (b *Breaker) Release() {
	for {
		s := b.state.Load()
		active, waiting := unpack(s)
		if waiting > 0 {
			if b.state.CompareAndSwap(s, s-waiterUnit) {
				b.handoff <- struct{}{} // buffered for depth: never blocks
				return
			}
			continue
		}
		if active == 0 {
			panic("queue: Breaker.Release without Acquire")
		}
		if b.state.CompareAndSwap(s, s-1) {
			return
		}
	}
}

// breakerHandler admits requests through a Breaker: 503 with a clear body
// when overloaded, or when the client gives up while waiting. A request
// whose own deadline passes while it waits is answered 504 by the timeout
// handler.
type breakerHandler struct {
	next    http.Handler
	breaker *Breaker
}

func (h *breakerHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.breaker.Acquire(r.Context()); err != nil {
		if isTimeout(r.Context()) {
			return
		}
		if _, overloaded := err.(*OverloadError); !overloaded {
			err = fmt.Errorf("queue-proxy: gave up waiting for a free slot (containerConcurrency=%d): %w", h.breaker.Capacity(), err)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, err.Error()+"\n")
		return
	}
	defer h.breaker.Release()
	h.next.ServeHTTP(w, r)
}
