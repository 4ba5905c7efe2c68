package queue

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
)

func TestBreakerCapacityAndQueue(t *testing.T) {
	tests := []struct {
		name            string
		capacity, depth int
		acquire         int // concurrent Acquire calls that do not return yet
		wantInFlight    int
		wantQueued      int
		wantOverloaded  int
	}{
		{name: "under capacity", capacity: 3, depth: 2, acquire: 2, wantInFlight: 2},
		{name: "at capacity", capacity: 3, depth: 2, acquire: 3, wantInFlight: 3},
		{name: "queueing", capacity: 3, depth: 2, acquire: 4, wantInFlight: 3, wantQueued: 1},
		{name: "queue full", capacity: 3, depth: 2, acquire: 5, wantInFlight: 3, wantQueued: 2},
		{name: "over queue", capacity: 3, depth: 2, acquire: 8, wantInFlight: 3, wantQueued: 2, wantOverloaded: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := NewBreaker(tt.capacity, tt.depth)
				ctx, cancel := context.WithCancel(t.Context())
				var overloaded atomic.Int32
				var wg sync.WaitGroup
				for range tt.acquire {
					wg.Go(func() {
						err := b.Acquire(ctx)
						var oe *OverloadError
						switch {
						case errors.As(err, &oe):
							overloaded.Add(1)
						case err == nil:
							<-ctx.Done() // hold the slot until the test looks
							b.Release()
						}
					})
				}
				synctest.Wait()
				got := []int{b.InFlight(), b.Queued(), int(overloaded.Load())}
				want := []int{tt.wantInFlight, tt.wantQueued, tt.wantOverloaded}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("[in flight, queued, overloaded] (-want +got):\n%s", diff)
				}
				cancel()
				wg.Wait()
			})
		})
	}
}

// Waiters are served in the order they arrived.
func TestBreakerReleaseOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBreaker(1, 10)
		if err := b.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Go(func() {
				if err := b.Acquire(t.Context()); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				b.Release()
			})
			synctest.Wait() // waiter i is parked before i+1 arrives
		}
		b.Release()
		wg.Wait()
		if diff := cmp.Diff([]int{0, 1, 2, 3, 4}, order); diff != "" {
			t.Errorf("service order (-want +got):\n%s", diff)
		}
		if b.InFlight() != 0 || b.Queued() != 0 {
			t.Errorf("after all released: %d in flight, %d queued; want 0, 0", b.InFlight(), b.Queued())
		}
	})
}

// A waiter whose context ends leaves the line without losing a slot.
func TestBreakerCancelWhileQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBreaker(1, 10)
		if err := b.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancelCause(t.Context())
		gaveUp := make(chan error)
		go func() { gaveUp <- b.Acquire(ctx) }()
		synctest.Wait()
		cause := errors.New("client went away")
		cancel(cause)
		if err := <-gaveUp; !errors.Is(err, cause) {
			t.Errorf("Acquire() after cancel = %v, want %v", err, cause)
		}
		if got := b.Queued(); got != 0 {
			t.Errorf("Queued() after cancel = %d, want 0", got)
		}
		b.Release()
		if err := b.Acquire(t.Context()); err != nil {
			t.Errorf("Acquire() after release = %v, want nil", err)
		}
		b.Release()
	})
}

// Many goroutines with random cancellations never exceed the capacity and
// leave the breaker empty. Run with -race.
func TestBreakerConcurrent(t *testing.T) {
	const capacity, depth, workers, rounds = 4, 8, 32, 200
	b := NewBreaker(capacity, depth)
	var active, peak atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				ctx, cancel := context.WithCancel(context.Background())
				if (w+i)%7 == 0 {
					cancel() // some give up before or while waiting
				}
				if err := b.Acquire(ctx); err == nil {
					n := active.Add(1)
					for {
						p := peak.Load()
						if n <= p || peak.CompareAndSwap(p, n) {
							break
						}
					}
					active.Add(-1)
					b.Release()
				}
				cancel()
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > capacity {
		t.Errorf("peak concurrency %d exceeds capacity %d", p, capacity)
	}
	if b.InFlight() != 0 || b.Queued() != 0 {
		t.Errorf("after all done: %d in flight, %d queued; want 0, 0", b.InFlight(), b.Queued())
	}
}

func TestBreakerHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release
			io.WriteString(w, "done")
		})
		h := &breakerHandler{next: app, breaker: NewBreaker(1, 1)}
		serve := func(ctx context.Context) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
			return rec
		}
		results := make(chan *httptest.ResponseRecorder, 2)
		go func() { results <- serve(t.Context()) }() // holds the slot
		synctest.Wait()
		go func() { results <- serve(t.Context()) }() // queued
		synctest.Wait()

		full := serve(t.Context())
		wantBody := "queue-proxy: overloaded: 1 requests in flight and 1 queued for containerConcurrency=1\n"
		if full.Code != http.StatusServiceUnavailable || full.Body.String() != wantBody {
			t.Errorf("over queue: %d %q, want 503 %q", full.Code, full.Body, wantBody)
		}

		ctx, cancel := context.WithCancel(t.Context())
		gone := make(chan *httptest.ResponseRecorder)
		go func() { gone <- serve(ctx) }()
		synctest.Wait()
		// The queue is full, so this one was refused too.
		if rec := <-gone; rec.Code != http.StatusServiceUnavailable {
			t.Errorf("second over-queue request: %d, want 503", rec.Code)
		}
		cancel()

		close(release)
		for range 2 {
			if rec := <-results; rec.Code != http.StatusOK || rec.Body.String() != "done" {
				t.Errorf("admitted request: %d %q, want 200 done", rec.Code, rec.Body)
			}
		}
	})
}

func TestBreakerHandlerClientGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release })
		h := &breakerHandler{next: app, breaker: NewBreaker(1, 5)}
		go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan *httptest.ResponseRecorder)
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
			done <- rec
		}()
		synctest.Wait()
		cancel()
		rec := <-done
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "gave up waiting for a free slot (containerConcurrency=1): context canceled") {
			t.Errorf("client gave up: %d %q", rec.Code, rec.Body)
		}
		close(release)
	})
}
