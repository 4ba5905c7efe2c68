package h1proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/knitops/knit/dataplane/forward"
)

// maxInformational is http.Transport's limit on 1xx answers before the
// final one.
const maxInformational = 5

// RoundTrip sends the head the caller wrote into Head and reads the
// upstream's answer up to its final head, relaying informational (1xx)
// answers to w as ReverseProxy does. answered reports whether any byte
// of an answer arrived: a request on a Reused connection that failed
// before it may go again on a new one, as http.Transport retries it.
func (c *Conn) RoundTrip(w http.ResponseWriter, r *http.Request) (res *http.Response, answered bool, err error) {
	if err := c.bw.Flush(); err != nil {
		return nil, false, err
	}
	c.headLimit = MaxResponseHeaderBytes
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
		c.headLimit = MaxResponseHeaderBytes
		h := w.Header()
		CopyHeader(h, res.Header)
		w.WriteHeader(res.StatusCode)
		clear(h) // WriteHeader leaves a 1xx's header in place
	}
}

// Relay writes res, the final answer RoundTrip read on c for r, to w as
// ReverseProxy relays an answer: hop-by-hop headers dropped, trailers
// announced and passed on, streamed answers flushed as they come. An
// answer it refuses before writing anything (a 101 to a request that
// asked for no upgrade) is err, for the caller's error handler. A body
// that cannot be read or written cuts the client's answer short with
// http.ErrAbortHandler, as ReverseProxy does; readFailed hears of a
// failed read first. reusable reports whether c may go back to its pool:
// the whole answer came through and nothing followed it.
func (c *Conn) Relay(w http.ResponseWriter, r *http.Request, res *http.Response, readFailed func(error)) (reusable bool, err error) {
	if res.StatusCode == http.StatusSwitchingProtocols {
		// Only upgrades take the slow path; this request asked for none.
		return false, fmt.Errorf("backend tried to switch protocol %q when %q was requested", UpgradeType(res.Header), "")
	}
	forward.StripHopByHop(res.Header)
	h := w.Header()
	CopyHeader(h, res.Header)
	announced := len(res.Trailer)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range res.Trailer {
			keys = append(keys, k)
		}
		h.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(res.StatusCode)
	if err := copyBody(w, res, c.br.Buffered() > 0, readFailed); err != nil {
		if r.Context().Value(http.ServerContextKey) == nil {
			return false, nil // not under an http.Server (a test): ReverseProxy does not panic either
		}
		panic(http.ErrAbortHandler) // cut the client's answer short, as ReverseProxy does
	}
	reusable = !res.Close && c.drained(r.Method, res.StatusCode)
	if len(res.Trailer) > 0 {
		http.NewResponseController(w).Flush() // force chunking, as ReverseProxy does
	}
	if len(res.Trailer) == announced {
		CopyHeader(h, res.Trailer)
		return reusable, nil
	}
	for k, vv := range res.Trailer {
		k = http.TrailerPrefix + k
		for _, v := range vv {
			h.Add(k, v)
		}
	}
	return reusable, nil
}

// copyBody relays the answer's body, flushing after every write when it
// streams (Server-Sent Events, or no Content-Length), as ReverseProxy
// does. A streamed head goes out at once unless some of the body is
// already here (bodyReady) to go with it: ReverseProxy flushes the head
// from a timer that fires at once, which loses the race to a body that
// is ready, so net/http then still sniffs an untyped answer's
// Content-Type. It reports a failed read or write; the body is then not
// drained.
func copyBody(w http.ResponseWriter, res *http.Response, bodyReady bool, readFailed func(error)) error {
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
			readFailed(rerr)
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

// CopyHeader adds src's values to dst, as ReverseProxy's copyHeader does
// (src's keys are canonical). src is an answer of the upstream's, read
// for this request alone, so dst may take its slices.
func CopyHeader(dst, src http.Header) {
	for k, vv := range src {
		if prior, ok := dst[k]; ok {
			dst[k] = append(prior, vv...)
		} else {
			dst[k] = vv
		}
	}
}

// isEventStream reports whether a Content-Type's media type is
// text/event-stream, as mime.ParseMediaType would read it.
func isEventStream(contentType string) bool {
	base, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(base), "text/event-stream")
}
