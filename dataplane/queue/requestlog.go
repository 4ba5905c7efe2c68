package queue

import (
	"log/slog"
	"net/http"
	"time"
)

// requestLogHandler logs one line per request. It is only stacked when
// SERVING_ENABLE_REQUEST_LOG is on, so it costs nothing otherwise.
type requestLogHandler struct {
	next http.Handler
	log  *slog.Logger
}

func (h *requestLogHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rw, owned := wrapWriter(w)
	defer func() {
		h.log.LogAttrs(r.Context(), slog.LevelInfo, "Request",
			slog.String("method", r.Method),
			slog.String("host", r.Host),
			slog.String("path", r.URL.Path),
			slog.String("proto", r.Proto),
			slog.String("remote", r.RemoteAddr),
			slog.Int("status", rw.Status()),
			slog.Duration("latency", time.Since(start)),
		)
		if owned {
			releaseWriter(rw)
		}
	}()
	h.next.ServeHTTP(rw, r)
}
