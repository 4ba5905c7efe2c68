package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knitops/knit/dataplane/h1proxy"
)

// TimeoutError is the cause of a request context the timeout handler ends.
type TimeoutError struct {
	// Setting is the Revision field that set the limit.
	Setting string
	Limit   time.Duration
	what    string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("queue-proxy: %s within %v (%s)", e.what, e.Limit, e.Setting)
}

// timeoutHandler enforces a Revision's three timeouts with one timer per
// request, on the serving goroutine (no goroutine or mutex per request):
//
//   - total: the whole request, queueing included, until its response
//     starts (timeoutSeconds): as in Knative's queue-proxy, a response
//     already under way is let finish (Knative's conformance test
//     "writes first byte before timeout" streams for 15 s under 10);
//   - response start: until the first response byte (responseStartTimeoutSeconds);
//   - idle: between writes to the client, counted from arrival until the
//     first one (idleTimeoutSeconds).
//
// Only writes through the response count: an upgrade's 101 and all the
// traffic after it, both ways, go over the hijacked connection unseen, as
// they bypass Knative's timeoutWriter. An upgraded connection (websocket)
// thus runs on what the response saw before the hijack, usually nothing:
// it is closed at the first of the three limits counted from the
// request's arrival, however busy it is, as Knative's queue-proxy closes
// it. Hence no bookkeeping per hijacked connection.
//
// When one expires it cancels the request context with a *TimeoutError,
// which makes the proxy give up on the app, and refuses further writes. If
// nothing was sent yet the client gets 504 with a body naming the limit;
// otherwise the response is cut off, or an upgraded connection closed
// (ReverseProxy closes the app's end on the cancellation, then the
// client's). Inner handlers must honour context cancellation, as
// httputil.ReverseProxy does.
type timeoutHandler struct {
	next                        http.Handler
	total, responseStart, idle  time.Duration
	totalErr, startErr, idleErr *TimeoutError
	// deadlines are finished requests' deadlines, each with its timer,
	// whose timer was stopped before it fired: nothing else holds them.
	deadlines sync.Pool
	// base is what a deadline's start counts from.
	base time.Time
}

func newTimeoutHandler(next http.Handler, total, responseStart, idle time.Duration) *timeoutHandler {
	return &timeoutHandler{
		next: next, total: total, responseStart: responseStart, idle: idle, base: time.Now(),
		totalErr: &TimeoutError{Setting: "timeoutSeconds", Limit: total, what: "request timeout: the app did not finish answering"},
		startErr: &TimeoutError{Setting: "responseStartTimeoutSeconds", Limit: responseStart, what: "response start timeout: the app did not start answering"},
		idleErr:  &TimeoutError{Setting: "idleTimeoutSeconds", Limit: idle, what: "idle timeout: the app wrote nothing"},
	}
}

func (h *timeoutHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.total <= 0 && h.responseStart <= 0 && h.idle <= 0 {
		h.next.ServeHTTP(w, r)
		return
	}
	rw, owned := wrapWriter(w)
	if owned {
		defer releaseWriter(rw)
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	d := h.arm(r.Context(), cancel)
	outer := rw.deadline
	rw.deadline = d
	defer func() {
		idle := d.finish()
		cancel(context.Canceled)
		rw.deadline = outer
		d.parent = nil
		if idle {
			h.deadlines.Put(d)
		}
	}()

	h.next.ServeHTTP(rw, r.WithContext(ctx))

	if err := d.expired(); err != nil && !rw.wroteHeader {
		writeTimeout(rw, err)
	}
}

// arm returns the deadline of a request starting now, its timer armed:
// a finished request's if one is idle, else a new one.
func (h *timeoutHandler) arm(parent context.Context, cancel context.CancelCauseFunc) *deadline {
	d, _ := h.deadlines.Get().(*deadline)
	if d == nil {
		d = &deadline{h: h}
		// Arm only once d.timer is set: check may Reset it.
		d.timer = time.AfterFunc(time.Duration(1<<63-1), d.check)
	}
	// A reused deadline's last timer callback may still be returning
	// (from its Reset): start is atomic, and the cancel it reads only
	// after winning the state is published by that state's Store.
	d.cancel, d.parent = cancel, parent
	d.appConn.Store(nil)
	d.start.Store(int64(time.Since(h.base)))
	d.cause.Store(nil)
	d.started.Store(false)
	d.lastWrite.Store(0)
	d.state.Store(deadlineRunning)
	d.timer.Reset(d.firstWait())
	return d
}

// writeTimeout answers 504, bypassing the refusal of late writes.
func writeTimeout(rw *responseWriter, err *TimeoutError) {
	h := rw.Header()
	clear(h)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	rw.ResponseWriter.WriteHeader(http.StatusGatewayTimeout)
	rw.status, rw.wroteHeader = http.StatusGatewayTimeout, true
	io.WriteString(rw.ResponseWriter, err.Error()+"\n")
}

// Deadline states.
const (
	deadlineRunning int32 = iota
	deadlineExpired
	deadlineDone
)

// deadline is one request's timeouts, shared by the serving goroutine
// (writes) and the timer goroutine (check).
type deadline struct {
	h      *timeoutHandler
	start  atomic.Int64 // nanoseconds from h.base
	timer  *time.Timer
	cancel context.CancelCauseFunc

	// parent is the request's context before the timeout handler's: the
	// server ends it when the client goes away.
	parent context.Context
	// appConn is the fast path's connection to the app while it waits on
	// it: an expiry aborts it directly, so the fast path needs no
	// callback on this request's context (h1forward.go).
	appConn atomic.Pointer[h1proxy.Conn]

	state     atomic.Int32
	cause     atomic.Pointer[TimeoutError]
	started   atomic.Bool  // a response byte or header went out, the hijacked connection's aside
	lastWrite atomic.Int64 // nanoseconds since start, kept only with an idle timeout
}

// elapsed is the time since the request started.
func (d *deadline) elapsed() time.Duration {
	return time.Since(d.h.base) - time.Duration(d.start.Load())
}

func (d *deadline) firstWait() time.Duration {
	wait := time.Duration(1<<63 - 1)
	for _, t := range []time.Duration{d.h.total, d.h.responseStart, d.h.idle} {
		if t > 0 {
			wait = min(wait, t)
		}
	}
	return wait
}

// allowWrite notes a write and reports whether it may proceed.
func (d *deadline) allowWrite() bool {
	if d.state.Load() == deadlineExpired {
		return false
	}
	if !d.started.Load() {
		d.started.Store(true)
	}
	if d.h.idle > 0 {
		d.lastWrite.Store(int64(d.elapsed()))
	}
	return true
}

// check runs on the timer: it expires the request if a limit has passed,
// or sleeps until the earliest one that still can.
func (d *deadline) check() {
	if d.state.Load() != deadlineRunning {
		return
	}
	elapsed := d.elapsed()
	next := time.Duration(1<<63 - 1)
	consider := func(at time.Duration, err *TimeoutError) bool {
		if elapsed >= at {
			d.expire(err)
			return true
		}
		next = min(next, at)
		return false
	}
	h := d.h
	if h.total > 0 && !d.started.Load() && consider(h.total, h.totalErr) {
		return
	}
	if h.responseStart > 0 && !d.started.Load() && consider(h.responseStart, h.startErr) {
		return
	}
	if h.idle > 0 && consider(time.Duration(d.lastWrite.Load())+h.idle, h.idleErr) {
		return
	}
	if next < time.Duration(1<<63-1) && d.state.Load() == deadlineRunning {
		d.timer.Reset(next - elapsed)
	}
}

func (d *deadline) expire(err *TimeoutError) {
	d.cause.Store(err)
	if d.state.CompareAndSwap(deadlineRunning, deadlineExpired) {
		d.cancel(err)
		if c := d.appConn.Load(); c != nil {
			c.Abort()
		}
	}
}

// expired returns the limit that ended the request, if one did.
func (d *deadline) expired() *TimeoutError {
	if d.state.Load() == deadlineExpired {
		return d.cause.Load()
	}
	return nil
}

// finish stops the timer once the handler has returned. It reports
// whether the timer was stopped before firing (or after it re-armed
// itself, its last act), so that nothing runs on d any more and it may
// serve another request.
func (d *deadline) finish() (idle bool) {
	d.state.CompareAndSwap(deadlineRunning, deadlineDone)
	return d.timer.Stop()
}

// isTimeout reports whether ctx was ended by the timeout handler.
func isTimeout(ctx context.Context) bool {
	var te *TimeoutError
	return errors.As(context.Cause(ctx), &te)
}
