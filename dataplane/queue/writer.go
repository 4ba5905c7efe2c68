package queue

import (
	"bufio"
	"net"
	"net/http"
	"sync"
)

// responseWriter is the one wrapper the handler stack shares: the first
// handler that needs it wraps (from a pool), inner ones find it by type.
// It records the status for metrics and lets the timeout handler refuse
// writes after a deadline. It is used by the serving goroutine only; the
// timeout's timer goroutine touches only the deadline it points to.
type responseWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	hijacked    bool
	// deadline is set by the timeout handler while it runs.
	deadline *deadline
}

var writerPool = sync.Pool{New: func() any { return new(responseWriter) }}

// wrapWriter returns w as the shared *responseWriter. When it had to wrap,
// owned is true and the caller must call releaseWriter when its
// ServeHTTP returns.
func wrapWriter(w http.ResponseWriter) (rw *responseWriter, owned bool) {
	if rw, ok := w.(*responseWriter); ok {
		return rw, false
	}
	rw = writerPool.Get().(*responseWriter)
	rw.ResponseWriter = w
	return rw, true
}

func releaseWriter(rw *responseWriter) {
	*rw = responseWriter{}
	writerPool.Put(rw)
}

// Status is the status sent, 200 if the handler only wrote a body, 0 if
// nothing was written yet.
func (w *responseWriter) Status() int { return w.status }

func (w *responseWriter) WriteHeader(code int) {
	if w.deadline != nil && !w.deadline.allowWrite() {
		return
	}
	// 1xx other than 101 are informational (103 Early Hints): more follow.
	if !w.wroteHeader && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.deadline != nil && !w.deadline.allowWrite() {
		return 0, http.ErrHandlerTimeout
	}
	if !w.wroteHeader {
		w.status = http.StatusOK
		w.wroteHeader = true
	}
	return w.ResponseWriter.Write(p)
}

// Flush sends buffered data to the client; ReverseProxy flushes streaming
// responses (unknown length, event streams) after every write.
func (w *responseWriter) Flush() {
	if w.deadline != nil && !w.deadline.allowWrite() {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if !w.wroteHeader {
			w.status = http.StatusOK
			w.wroteHeader = true
		}
		f.Flush()
	}
}

// Hijack hands the connection over for a protocol upgrade (websockets).
// The deadline is deliberately not told: traffic on the connection is no
// write to the response, so the timeouts keep counting from what was
// written before and close the connection through the request context
// (timeoutHandler). The status is 101 for the metrics.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.hijacked = true
	if !w.wroteHeader {
		w.status = http.StatusSwitchingProtocols
		w.wroteHeader = true
	}
	return conn, brw, nil
}

// Unwrap lets http.ResponseController reach the server's writer for
// deadlines and full duplex.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
