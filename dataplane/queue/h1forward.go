package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strings"

	"github.com/knitops/knit/dataplane/forward"
)

// appForwarder sends each request to the app. The common case, an
// HTTP/1.x GET or HEAD without a body or an upgrade, goes on the fast
// path: written and answered on the serving goroutine over a pooled
// loopback connection (connPool), with no request clone, transport
// goroutines or per-request trace. Everything else (bodies, upgrades,
// HTTP/2, an h2c app, K-Original-Host) goes through httputil.ReverseProxy
// and http.Transport. Both paths apply the same rules (proxy.go), and a
// differential test holds the fast one to what ReverseProxy does.
type appForwarder struct {
	addr string
	pool *connPool // nil: no fast path (an h2c app)
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
	if r.ProtoMajor != 1 || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 || r.URL.Opaque != "" {
		return false
	}
	if !plainQuery(r.URL.RawQuery) || !plainHost(r.Host) {
		return false
	}
	if _, ok := r.Header[originalHostHeader]; ok {
		return false
	}
	return !headerHasToken(r.Header["Connection"], "upgrade")
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
		c    *appConn
		res  *http.Response
		stop func() bool
	)
	for {
		var err error
		if c, err = f.pool.get(ctx); err != nil {
			f.fail(w, r, err)
			return
		}
		stop = context.AfterFunc(watched, c.abortFn)
		if d != nil {
			d.appConn.Store(c)
		}
		var answered bool
		res, answered, err = f.roundTrip(w, r, c)
		if err == nil {
			break
		}
		stop()
		if d != nil {
			d.appConn.Store(nil)
		}
		c.conn.Close()
		if !c.reused || answered || ctx.Err() != nil {
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
			f.pool.put(c)
		} else {
			c.conn.Close()
		}
	}()
	if res.StatusCode == http.StatusSwitchingProtocols {
		// Only upgrades take the slow path; this request asked for none.
		f.fail(w, r, fmt.Errorf("backend tried to switch protocol %q when %q was requested", upgradeType(res.Header), ""))
		return
	}
	forward.StripHopByHop(res.Header)
	h := w.Header()
	copyHeader(h, res.Header)
	announced := len(res.Trailer)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range res.Trailer {
			keys = append(keys, k)
		}
		h.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(res.StatusCode)
	if err := f.copyBody(w, res, c.br.Buffered() > 0); err != nil {
		if r.Context().Value(http.ServerContextKey) == nil {
			return // not under an http.Server (a test): ReverseProxy does not panic either
		}
		panic(http.ErrAbortHandler) // cut the client's answer short, as ReverseProxy does
	}
	reusable = !res.Close && c.drained(r.Method, res.StatusCode)
	if len(res.Trailer) > 0 {
		http.NewResponseController(w).Flush() // force chunking, as ReverseProxy does
	}
	if len(res.Trailer) == announced {
		copyHeader(h, res.Trailer)
		return
	}
	for k, vv := range res.Trailer {
		k = http.TrailerPrefix + k
		for _, v := range vv {
			h.Add(k, v)
		}
	}
}

// maxInformational is http.Transport's limit on 1xx answers before the
// final one.
const maxInformational = 5

// roundTrip writes r's head on c and reads the app's answer up to its
// final head, relaying informational (1xx) answers to w as ReverseProxy
// does. answered reports whether any byte of an answer arrived.
func (f *appForwarder) roundTrip(w http.ResponseWriter, r *http.Request, c *appConn) (res *http.Response, answered bool, err error) {
	writeRequestHead(c.bw, r)
	if err := c.bw.Flush(); err != nil {
		return nil, false, err
	}
	c.headLimit = maxResponseHeaderBytes
	defer func() { c.headLimit = -1 }()
	for informational := 0; ; informational++ {
		if _, err := c.br.Peek(1); err != nil {
			return nil, answered, err
		}
		answered = true
		res, err = http.ReadResponse(c.br, r)
		if err != nil {
			return nil, true, err
		}
		if res.StatusCode >= 200 || res.StatusCode < 100 || res.StatusCode == http.StatusSwitchingProtocols {
			return res, true, nil
		}
		if informational == maxInformational {
			return nil, true, errors.New("net/http: too many 1xx informational responses")
		}
		c.headLimit = maxResponseHeaderBytes
		h := w.Header()
		copyHeader(h, res.Header)
		w.WriteHeader(res.StatusCode)
		clear(h) // WriteHeader leaves a 1xx's header in place
	}
}

// copyBody relays the answer's body, flushing after every write when it
// streams (Server-Sent Events, or no Content-Length), as ReverseProxy
// does. A streamed head goes out at once unless some of the body is
// already here (bodyReady) to go with it: ReverseProxy flushes the head
// from a timer that fires at once, which loses the race to a body that
// is ready, so net/http then still sniffs an untyped answer's
// Content-Type. It reports a failed read or write; the body is then not
// drained.
func (f *appForwarder) copyBody(w http.ResponseWriter, res *http.Response, bodyReady bool) error {
	stream := res.ContentLength == -1 || isEventStream(res.Header.Get("Content-Type"))
	var flush func() error
	if stream {
		flush = http.NewResponseController(w).Flush
		if !bodyReady {
			flush()
		}
	}
	buf := forward.BufferPool{}.Get()
	defer forward.BufferPool{}.Put(buf)
	for {
		n, rerr := res.Body.Read(buf)
		if rerr != nil && rerr != io.EOF && rerr != context.Canceled {
			f.log.Warn("Reading the app's answer failed", "err", rerr)
		}
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if stream {
				flush()
			}
		}
		if rerr == io.EOF {
			return res.Body.Close() // populates res.Trailer
		}
		if rerr != nil {
			return rerr
		}
	}
}

// copyHeader adds src's values to dst, as ReverseProxy's copyHeader does
// (src's keys are canonical). src is an answer of the app's, read for
// this request alone, so dst may take its slices.
func copyHeader(dst, src http.Header) {
	for k, vv := range src {
		if prior, ok := dst[k]; ok {
			dst[k] = append(prior, vv...)
		} else {
			dst[k] = vv
		}
	}
}

// fail answers a request the app could not take, through the same error
// handler as the slow path.
func (f *appForwarder) fail(w http.ResponseWriter, r *http.Request, err error) {
	f.slow.ErrorHandler(w, r, err)
}

// isEventStream reports whether a Content-Type's media type is
// text/event-stream, as mime.ParseMediaType would read it.
func isEventStream(contentType string) bool {
	base, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(base), "text/event-stream")
}
