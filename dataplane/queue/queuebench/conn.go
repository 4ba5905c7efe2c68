package queuebench

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Request is an HTTP/1.1 request prepared once and sent as the same
// bytes every time (head and body in one write), so the load generator
// spends its share of the CPU on little more than the two syscalls a
// request needs: on a 2-core box it competes with the proxies it
// measures.
type Request struct {
	URL  string
	addr string
	wire []byte
	// wantBody is the length a 200 answer's body must have; negative
	// takes any.
	wantBody int64
}

// NewRequest prepares a GET of rawURL (http only) with Host host (the
// URL's host when empty) and the extra header, taking any answer body.
func NewRequest(rawURL, host string, header http.Header) (*Request, error) {
	r, err := newRequest(ShapeGet, rawURL, host, header)
	if err != nil {
		return nil, err
	}
	r.wantBody = -1
	return r, nil
}

// NewShapeRequest prepares the HTTP/1.1 request of shape (not ShapeH2C)
// to App behind rawURL: on the shape's path, with its body, wanting its
// answer's length.
func NewShapeRequest(shape Shape, rawURL, host string, header http.Header) (*Request, error) {
	if shape == ShapeH2C {
		return nil, fmt.Errorf("%s is not an HTTP/1.1 request", shape.Label())
	}
	return newRequest(shape, rawURL, host, header)
}

func newRequest(shape Shape, rawURL, host string, header http.Header) (*Request, error) {
	u, err := shapeURL(shape, rawURL)
	if err != nil {
		return nil, err
	}
	req := &http.Request{
		Method: http.MethodGet, URL: u, Host: host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header.Clone(),
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("User-Agent", "knit-bench")
	if shape == ShapePost {
		req.Method = http.MethodPost
		req.ContentLength = PostBodyBytes
		req.Body = io.NopCloser(bytes.NewReader(postBody))
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	var wire bytes.Buffer
	if err := req.Write(&wire); err != nil {
		return nil, err
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &Request{URL: u.String(), addr: addr, wire: wire.Bytes(), wantBody: shape.wantBody()}, nil
}

// postBody is what ShapePost sends.
var postBody = bytes.Repeat([]byte("knit"), PostBodyBytes/4)

// shapeURL is rawURL (http only) with the shape's app path, if it has one.
func shapeURL(shape Shape, rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("%s: want http://host:port/path", rawURL)
	}
	if p := shape.path(); p != "" {
		u.Path, u.RawPath = p, ""
	}
	return u, nil
}

// Conn sends one Request over a kept-alive HTTP/1.1 connection, one at a
// time, redialing after an error or a "Connection: close". It is not
// safe for concurrent use: each load worker has its own.
type Conn struct {
	req      *Request
	deadline time.Time
	// tls, when set, is the TLS the connection speaks HTTP/1.1 over.
	tls *tls.Config
	c   net.Conn
	br  *bufio.Reader
	// got counts the body bytes of the answer being read.
	got int64
}

// NewConn returns a connection for req that dials on first use. No
// request may run past deadline (zero: none), so a stuck server cannot
// hang the load generator.
func NewConn(req *Request, deadline time.Time) *Conn {
	return &Conn{req: req, deadline: deadline}
}

// NewTLSConn is NewConn over TLS with cfg, which should offer only
// http/1.1 by ALPN.
func NewTLSConn(req *Request, deadline time.Time, cfg *tls.Config) *Conn {
	return &Conn{req: req, deadline: deadline, tls: cfg}
}

// dial opens the connection, through a TLS handshake for a TLS Conn.
func (c *Conn) dial() (net.Conn, error) {
	d := &net.Dialer{Timeout: 5 * time.Second, Deadline: c.deadline}
	if c.tls != nil {
		return tls.DialWithDialer(d, "tcp", c.req.addr, c.tls)
	}
	return d.Dial("tcp", c.req.addr)
}

// Close closes the connection; a later Do redials.
func (c *Conn) Close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

// StatusError is an answer other than 200.
type StatusError struct {
	URL    string
	Status int
	Body   string // the start of the body
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: %d %s", e.URL, e.Status, e.Body)
}

// BodyError is a 200 whose body is not as long as the request's shape
// answers: a proxy cut or padded it.
type BodyError struct {
	URL       string
	Got, Want int64
}

func (e *BodyError) Error() string {
	return fmt.Sprintf("%s: 200 with %d body bytes, want %d", e.URL, e.Got, e.Want)
}

// maxErrorBody is how much of a non-200 body a StatusError keeps.
const maxErrorBody = 256

var (
	hdrContentLength    = []byte("Content-Length")
	hdrTransferEncoding = []byte("Transfer-Encoding")
	hdrConnection       = []byte("Connection")
	valChunked          = []byte("chunked")
	valClose            = []byte("close")
)

// Do sends the request and reads the whole answer; anything but 200 is
// a *StatusError.
func (c *Conn) Do() error {
	if c.c == nil {
		nc, err := c.dial()
		if err != nil {
			return err
		}
		if !c.deadline.IsZero() {
			nc.SetDeadline(c.deadline)
		}
		c.c = nc
		if c.br == nil {
			c.br = bufio.NewReaderSize(nc, 16<<10)
		} else {
			c.br.Reset(nc)
		}
	}
	if _, err := c.c.Write(c.req.wire); err != nil {
		c.Close()
		return err
	}
	closeAfter, err := c.readResponse()
	if closeAfter {
		c.Close()
	}
	return err
}

// readResponse reads one answer; closeAfter says the connection cannot
// carry another request.
func (c *Conn) readResponse() (closeAfter bool, err error) {
	var status int
	var length int64
	var chunked bool
	for { // skip 1xx answers
		status, length, chunked, closeAfter, err = c.readHead()
		if err != nil {
			return true, err
		}
		if status >= 200 || status == http.StatusSwitchingProtocols {
			break
		}
	}
	c.got = 0
	var sink *bytes.Buffer
	if status != http.StatusOK {
		sink = new(bytes.Buffer)
	}
	switch {
	case status == http.StatusNoContent || status == http.StatusNotModified:
	case chunked:
		err = c.readChunked(sink)
	case length >= 0:
		err = c.skip(length, sink)
	default: // until the server closes
		closeAfter = true
		err = c.skip(-1, sink)
	}
	if err != nil {
		return true, err
	}
	if sink != nil {
		return closeAfter, &StatusError{URL: c.req.URL, Status: status, Body: string(bytes.TrimSpace(sink.Bytes()))}
	}
	if c.req.wantBody >= 0 && c.got != c.req.wantBody {
		return closeAfter, &BodyError{URL: c.req.URL, Got: c.got, Want: c.req.wantBody}
	}
	return closeAfter, nil
}

// readHead reads a status line and headers, keeping what framing needs.
func (c *Conn) readHead() (status int, length int64, chunked, closeAfter bool, err error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, 0, false, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, 0, false, false, fmt.Errorf("malformed status line %q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, 0, false, false, fmt.Errorf("malformed status line %q", line)
	}
	closeAfter = line[7] == '0' // HTTP/1.0
	length = -1
	for {
		line, err = c.br.ReadSlice('\n')
		if err != nil {
			return 0, 0, false, false, fmt.Errorf("reading headers: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return status, length, chunked, closeAfter, nil
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, hdrContentLength):
			if length, err = strconv.ParseInt(string(v), 10, 64); err != nil || length < 0 {
				return 0, 0, false, false, fmt.Errorf("bad Content-Length %q", v)
			}
		case bytes.EqualFold(k, hdrTransferEncoding):
			chunked = bytes.Contains(bytes.ToLower(v), valChunked)
		case bytes.EqualFold(k, hdrConnection):
			closeAfter = closeAfter || bytes.EqualFold(v, valClose)
		}
	}
}

// skip reads n body bytes (all of them until EOF when n < 0) into sink,
// keeping its first maxErrorBody bytes, or discards them when sink is nil.
func (c *Conn) skip(n int64, sink *bytes.Buffer) error {
	if sink == nil && n >= 0 {
		d, err := c.br.Discard(int(n))
		c.got += int64(d)
		return err
	}
	var r io.Reader = c.br
	if n >= 0 {
		r = io.LimitReader(c.br, n)
	}
	var w io.Writer = io.Discard
	if sink != nil {
		w = &capped{b: sink}
	}
	copied, err := io.Copy(w, r)
	c.got += copied
	if n >= 0 && err == nil && copied < n {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// readChunked reads a chunked body and its trailers.
func (c *Conn) readChunked(sink *bytes.Buffer) error {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if size == 0 {
			for { // trailers, then the empty line
				line, err := c.br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					return nil
				}
			}
		}
		if err := c.skip(size, sink); err != nil {
			return err
		}
		if _, err := c.br.Discard(2); err != nil { // CRLF
			return err
		}
	}
}

// capped keeps the first maxErrorBody bytes written to it.
type capped struct{ b *bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxErrorBody - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
