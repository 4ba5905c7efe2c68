package kobuild

import (
	"context"
	"sync"
)

// flight runs at most one call per key at a time; callers that arrive
// while it runs wait for it and share its result. The call runs on its own
// goroutine, so a caller that gives up (ctx) does not cancel it for others.
type flight[T any] struct {
	mu    sync.Mutex
	calls map[string]*flightCall[T]
}

type flightCall[T any] struct {
	done chan struct{}
	val  T
	err  error
}

func (f *flight[T]) do(ctx context.Context, key string, fn func() (T, error)) (T, error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]*flightCall[T]{}
	}
	c, ok := f.calls[key]
	if !ok {
		c = &flightCall[T]{done: make(chan struct{})}
		f.calls[key] = c
		go func() {
			c.val, c.err = fn()
			f.mu.Lock()
			delete(f.calls, key)
			f.mu.Unlock()
			close(c.done)
		}()
	}
	f.mu.Unlock()
	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
