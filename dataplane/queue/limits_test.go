package queue

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/knitops/knit/dataplane/forward"
)

// The serving port refuses a request head past forward.DefaultLimits
// (431) rather than net/http's 1 MiB, and closes idle keep-alive
// connections (the behaviour is forward's test; this is that the
// queue-proxy's server has it).
func TestServingPortLimits(t *testing.T) {
	port := startApp(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "app") }), false)
	q := startQueue(t, port, nil)
	if q.serving.IdleTimeout != forward.DefaultLimits.IdleTimeout {
		t.Errorf("serving port IdleTimeout = %v, want %v", q.serving.IdleTimeout, forward.DefaultLimits.IdleTimeout)
	}
	for _, tt := range []struct {
		size int
		want int
	}{{1 << 10, http.StatusOK}, {forward.DefaultLimits.MaxHeaderBytes + 8<<10, http.StatusRequestHeaderFieldsTooLarge}} {
		code, _ := get(t, q.url, http.Header{"X-Big": {strings.Repeat("a", tt.size)}})
		if code != tt.want {
			t.Errorf("%d bytes of header: %d, want %d", tt.size, code, tt.want)
		}
	}
}
