package forward

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"
)

// Body stands in for a request's body across attempts: http.Transport
// closes the body when a dial fails, and a retry needs it open. It also
// remembers whether any of it was read, in which case the request may
// have reached an app and must not be sent again.
type Body struct {
	io.ReadCloser
	read atomic.Bool
}

// Hold puts a Body in place of req's body and returns it; a request
// without a body (most GETs) is left as is and gets nil, which Started
// answers false for, so it costs nothing.
func Hold(req *http.Request) *Body {
	if req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	b := &Body{ReadCloser: req.Body}
	req.Body = b // the server closes the original when the handler returns
	return b
}

func (b *Body) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.ReadCloser.Read(p)
}

// Close keeps the body open for the next attempt.
func (b *Body) Close() error { return nil }

// Started reports whether any of the body was read.
func (b *Body) Started() bool { return b != nil && b.read.Load() }

// Refused reports a connection refused: the endpoint is gone (or not yet
// listening), the request reached no app, and another attempt is safe
// unless its body was Started.
func Refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// Pause waits d between attempts, or less when ctx ends first (the client
// went away), and then says so.
func Pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
