package events

import (
	"encoding/json"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// queued is an event waiting for its sink.
type queued struct {
	event cloudevents.Event
	// raw is the event's structured JSON, as a Store saves it; its length
	// is what the queue's byte bound counts.
	raw      json.RawMessage
	enqueued time.Time
}

// fifo is a bounded ring buffer of events: beyond limit entries or
// maxBytes of raw events it drops its oldest. The byte bound keeps a sink's
// saved state inside what its Store can hold (a ConfigMap's 1 MiB). It grows
// on demand up to its limit, so idle sinks cost little, and knows the ids
// it holds, so a repeat is not queued twice. It is not safe for concurrent
// use; the worker's mutex guards it.
type fifo struct {
	buf      []queued
	head     int // index of the oldest entry
	n        int
	bytes    int // sum of len(raw) over the entries
	limit    int
	maxBytes int // 0: no byte bound
	ids      map[string]int
}

// push appends q, then drops the oldest entries while a bound is
// exceeded — q itself when it alone is over maxBytes — and returns them.
func (f *fifo) push(q queued) (dropped []queued) {
	if f.n == f.limit {
		old, _ := f.pop()
		dropped = append(dropped, old)
	}
	if f.n == len(f.buf) {
		f.grow()
	}
	f.buf[(f.head+f.n)%len(f.buf)] = q
	f.n++
	f.bytes += len(q.raw)
	if f.ids == nil {
		f.ids = map[string]int{}
	}
	f.ids[q.event.ID()]++
	for f.maxBytes > 0 && f.bytes > f.maxBytes && f.n > 0 {
		old, _ := f.pop()
		dropped = append(dropped, old)
	}
	return dropped
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
	f.bytes -= len(q.raw)
	if id := q.event.ID(); f.ids[id] > 1 {
		f.ids[id]--
	} else {
		delete(f.ids, id)
	}
	return q, true
}

func (f *fifo) len() int { return f.n }

// has reports whether an event with id is queued.
func (f *fifo) has(id string) bool { return f.ids[id] > 0 }

// each calls fn on every entry, oldest first.
func (f *fifo) each(fn func(queued)) {
	for i := range f.n {
		fn(f.buf[(f.head+i)%len(f.buf)])
	}
}

// grow doubles the buffer, up to limit, keeping the order.
func (f *fifo) grow() {
	size := min(max(2*len(f.buf), 16), f.limit)
	buf := make([]queued, size)
	for i := range f.n {
		buf[i] = f.buf[(f.head+i)%len(f.buf)]
	}
	f.buf, f.head = buf, 0
}
