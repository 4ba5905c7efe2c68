//go:build !race

package forward

import (
	"net/http"
	"testing"
)

// Counted without the race detector, whose sync.Pool drops items at
// random and whose instrumentation allocates.
func TestBufferPoolReuses(t *testing.T) {
	var p BufferPool
	p.Put(p.Get())
	// A GC may empty the pool mid-run; anything below one per call is
	// reuse, the bug would be one or more every time.
	if n := testing.AllocsPerRun(100, func() { p.Put(p.Get()) }); n >= 1 {
		t.Errorf("Get+Put allocates %.2f times per call, want the buffer reused", n)
	}
}

// The edge's rules run on every request: the Forwarded element, the
// X-Forwarded-For address and the headers' one-value slices.
func TestSetEdgeAllocations(t *testing.T) {
	in := &http.Request{RemoteAddr: "127.0.0.1:5555", Host: "hello.default.example.com", Header: http.Header{}}
	out := &http.Request{Header: http.Header{}}
	allocs := testing.AllocsPerRun(100, func() {
		clear(out.Header)
		SetEdge(out, in)
	})
	if allocs > 5 { // the element, and four one-value slices
		t.Errorf("SetEdge allocates %v times a request, want at most 5", allocs)
	}
}
