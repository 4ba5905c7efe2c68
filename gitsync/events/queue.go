package events

import (
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// queued is an event waiting for its sink.
type queued struct {
	event    cloudevents.Event
	enqueued time.Time
}

// fifo is a bounded ring buffer of events that overwrites its oldest entry
// when full. It grows on demand up to its limit, so idle sinks cost little.
// It is not safe for concurrent use; the worker's mutex guards it.
type fifo struct {
	buf   []queued
	head  int // index of the oldest entry
	n     int
	limit int
}

// push appends q; when full it first drops the oldest entry and returns it.
func (f *fifo) push(q queued) (oldest queued, overflow bool) {
	if f.n == len(f.buf) && len(f.buf) < f.limit {
		f.grow()
	}
	if f.n == f.limit {
		oldest = f.buf[f.head]
		f.buf[f.head] = q // the oldest slot becomes the newest
		f.head = (f.head + 1) % f.limit
		return oldest, true
	}
	f.buf[(f.head+f.n)%len(f.buf)] = q
	f.n++
	return queued{}, false
}

// pop removes and returns the oldest entry.
func (f *fifo) pop() (queued, bool) {
	if f.n == 0 {
		return queued{}, false
	}
	q := f.buf[f.head]
	f.buf[f.head] = queued{}
	f.head = (f.head + 1) % len(f.buf)
	f.n--
	return q, true
}

func (f *fifo) len() int { return f.n }

// grow doubles the buffer, up to limit, keeping the order.
func (f *fifo) grow() {
	size := min(max(2*len(f.buf), 16), f.limit)
	buf := make([]queued, size)
	for i := range f.n {
		buf[i] = f.buf[(f.head+i)%len(f.buf)]
	}
	f.buf, f.head = buf, 0
}
