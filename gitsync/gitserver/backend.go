package gitserver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cgi"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
)

// backend runs git http-backend for one request, with its body bounded
// and gzip-decoded.
func (s *Server) backend(w http.ResponseWriter, r *http.Request, name, endpoint string) {
	req := r.Clone(r.Context())
	req.URL.Path = "/" + name + ".git/" + endpoint
	req.URL.RawPath = ""
	// net/http/cgi refuses chunked bodies, which git sends for pushes over
	// http.postBuffer; a body of unknown length (no CONTENT_LENGTH) is
	// read by http-backend to its end instead.
	req.TransferEncoding = nil
	req.Header.Del("Content-Length")
	push := r.Method == http.MethodPost && endpoint == receivePack
	var over atomic.Bool // the body passed MaxPushBytes
	if r.Method == http.MethodPost {
		max := s.opts.MaxPushBytes
		if r.ContentLength > max {
			if !push {
				http.Error(w, fmt.Sprintf("request body of %d bytes is over the server's %d-byte limit", r.ContentLength, max), http.StatusRequestEntityTooLarge)
				return
			}
			over.Store(true) // refused once its commands are read (receive)
		}
		// Reading the body while the response is written is legal then;
		// http-backend may answer before it has read everything.
		_ = http.NewResponseController(w).EnableFullDuplex()
		reqLog := s.opts.Log.WithValues("repo", name, "endpoint", endpoint)
		req.Body = &limitedBody{rc: r.Body, left: max, max: max, log: reqLog, what: "request body", over: &over}
		switch enc := strings.ToLower(r.Header.Get("Content-Encoding")); enc {
		case "":
		case "gzip", "x-gzip":
			gz, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, "bad gzip request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			req.Body = &limitedBody{rc: gz, left: max, max: max, log: reqLog, what: "decompressed request body", over: &over}
			req.ContentLength = -1
			req.Header.Del("Content-Encoding")
		default:
			http.Error(w, fmt.Sprintf("unsupported Content-Encoding %q", enc), http.StatusUnsupportedMediaType)
			return
		}
		if req.ContentLength == 0 {
			req.ContentLength = -1 // unknown: let http-backend read to EOF
		}
	}
	out := lineLog{log: s.opts.Log.WithValues("repo", name)}
	h := &cgi.Handler{
		Path:   s.opts.Git,
		Args:   []string{"http-backend"},
		Dir:    s.opts.Root,
		Env:    s.env,
		Stderr: out,
		Logger: log.New(out, "", 0),
	}
	if push {
		s.receive(w, r, req, h, &over)
		return
	}
	h.ServeHTTP(w, req)
}

// receive runs a push's receive-pack request, and refuses the push in
// receive-pack's words when its body passes MaxPushBytes (refuse.go).
// What the client still sends of a refused push is read and dropped, up
// to maxDrainBytes, so that git reads the whole refusal (past that it
// reports a broken connection under the refusal's message).
func (s *Server) receive(w http.ResponseWriter, r, req *http.Request, h *cgi.Handler, over *atomic.Bool) {
	body := bufio.NewReader(req.Body)
	raw, cmds, _ := readCommands(body) // bad commands: http-backend says so
	if !over.Load() {
		req.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(raw), body), req.Body}
		resp := &pushResponse{w: w, over: over}
		h.ServeHTTP(resp, req)
		if resp.start() {
			return
		}
	}
	_, _ = io.CopyN(io.Discard, r.Body, maxDrainBytes)
	s.refuse(w, cmds)
}

// lineLog logs what git writes to its standard error, a line a message.
type lineLog struct{ log logr.Logger }

func (l lineLog) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(p, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			l.log.Info("git http-backend", "output", string(line))
		}
	}
	return len(p), nil
}

// limitedBody fails a read once more than max bytes came through. Unlike
// http.MaxBytesReader it never touches the ResponseWriter: it is read by
// exec's goroutine that feeds git's standard input while the handler
// writes the response.
type limitedBody struct {
	rc        io.ReadCloser
	left, max int64
	log       logr.Logger
	what      string
	over      *atomic.Bool // set once the limit is passed
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) <= b.left {
		b.left -= int64(n)
		return n, err
	}
	n, b.left = int(b.left), -1
	b.over.Store(true)
	b.log.Info("Request refused: over the size limit (Options.MaxPushBytes)", "limit", b.max, "body", b.what)
	return n, b.err()
}

func (b *limitedBody) err() error {
	return fmt.Errorf("%s over the %d-byte limit", b.what, b.max)
}

func (b *limitedBody) Close() error { return b.rc.Close() }
