package queue

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httputil"

	"github.com/knitops/knit/dataplane/h1proxy"
)

// appForwarder sends each request to the app. The common case, an
// HTTP/1.x GET or HEAD without a body or an upgrade, goes on the fast
// path: written and answered on the serving goroutine over a pooled
// loopback connection (h1proxy), with no request clone, transport
// goroutines or per-request trace. Everything else (bodies, upgrades,
// HTTP/2, an h2c app, K-Original-Host) goes through httputil.ReverseProxy
// and http.Transport. Both paths apply the same rules (proxy.go), and a
// differential test holds the fast one to what ReverseProxy does.
type appForwarder struct {
	addr string
	pool *h1proxy.Pool // nil: no fast path (an h2c app)
	slow *httputil.ReverseProxy
	log  *slog.Logger
}

func (f *appForwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.pool == nil || !fastPathable(r) {
		f.slow.ServeHTTP(w, r)
		return
	}
	f.forward(w, r)
}

// fastPathable reports whether r can take the fast path: what it sends
// the app is then fully decided by writeRequestHead.
func fastPathable(r *http.Request) bool {
	if r.ProtoMajor != 1 || !h1proxy.Bodiless(r) {
		return false
	}
	_, ok := r.Header[originalHostHeader]
	return !ok
}

// forward is the fast path: one round trip on a pooled connection,
// retried on a fresh one when a reused connection failed before the app
// answered (it closed it as the request went out, as http.Transport
// retries a replayable request), then the answer relayed as
// ReverseProxy relays it.
func (f *appForwarder) forward(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// What ends the request aborts its connection to the app: under the
	// timeout handler, its deadline for a timeout and a callback on the
	// server's context for a client gone; else a callback on ctx.
	var d *deadline
	if rw, ok := w.(*responseWriter); ok {
		d = rw.deadline
	}
	watched := ctx
	if d != nil {
		watched = d.parent
	}
	var (
		c    *h1proxy.Conn
		res  *http.Response
		stop func() bool
	)
	for {
		var err error
		if c, err = f.pool.Get(ctx); err != nil {
			f.fail(w, r, err)
			return
		}
		stop = context.AfterFunc(watched, c.AbortFunc())
		if d != nil {
			d.appConn.Store(c)
		}
		writeRequestHead(c.Head(), r)
		var answered bool
		res, answered, err = c.RoundTrip(w, r)
		if err == nil {
			break
		}
		stop()
		if d != nil {
			d.appConn.Store(nil)
		}
		c.Close()
		if !c.Reused() || answered || ctx.Err() != nil {
			f.fail(w, r, err)
			return
		}
	}
	// From here on c is reused only if the whole answer came through,
	// nothing followed it, and nothing ended the request.
	reusable := false
	defer func() {
		if d != nil {
			d.appConn.Store(nil)
			reusable = reusable && d.expired() == nil
		}
		if stop() && reusable {
			f.pool.Put(c)
		} else {
			c.Close()
		}
	}()
	var err error
	if reusable, err = c.Relay(w, r, res, f.readFailed); err != nil {
		f.fail(w, r, err)
	}
}

// readFailed logs an app's answer cut short.
func (f *appForwarder) readFailed(err error) {
	f.log.Warn("Reading the app's answer failed", "err", err)
}

// fail answers a request the app could not take, through the same error
// handler as the slow path.
func (f *appForwarder) fail(w http.ResponseWriter, r *http.Request, err error) {
	f.slow.ErrorHandler(w, r, err)
}
