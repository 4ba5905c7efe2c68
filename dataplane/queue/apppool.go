package queue

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits of the app connection pool, http.Transport's as forward
// configures it.
const (
	appDialTimeout     = 5 * time.Second
	appKeepAlive       = 30 * time.Second
	appIdleConnTimeout = 90 * time.Second
	// maxResponseHeaderBytes bounds an app's response head, as
	// http.Transport's default MaxResponseHeaderBytes does.
	maxResponseHeaderBytes = 10 << 20
	appBufferSize          = 4 << 10
)

// errPoolClosed is a request after the queue-proxy stopped.
var errPoolClosed = errors.New("queue-proxy: the app connection pool is closed")

// errHeadTooLarge is http.Transport's error for an oversized response head.
var errHeadTooLarge = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", maxResponseHeaderBytes)

// connPool keeps idle HTTP/1.1 connections to the app for the fast path
// (h1forward.go). It is a LIFO stack under one mutex: the app is one
// loopback address, so there is no per-host bookkeeping, and the most
// recently used connection is the warmest; connections idle past
// appIdleConnTimeout are closed, by a timer armed only while some are
// idle.
type connPool struct {
	addr    string
	dialer  net.Dialer
	maxIdle int

	mu     sync.Mutex
	idle   []*appConn
	reaper *time.Timer // armed while idle is not empty
	closed bool
}

func newConnPool(addr string, maxIdle int) *connPool {
	return &connPool{
		addr:    addr,
		dialer:  net.Dialer{Timeout: appDialTimeout, KeepAlive: appKeepAlive},
		maxIdle: maxIdle,
	}
}

// appConn is one connection to the app with its buffers.
type appConn struct {
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	// headLimit is how many more bytes the reader may take while a
	// response head is read; negative once the head is in.
	headLimit int64
	// reused is set once the connection served a request: a failure
	// before the app answered may then be a close the app raced with.
	reused bool
	idleAt time.Time
	// abortFn is abort, bound once rather than on every request.
	abortFn func()
}

// get returns an idle connection, or dials one.
func (p *connPool) get(ctx context.Context) (*appConn, error) {
	now := time.Now()
	p.mu.Lock()
	for n := len(p.idle); n > 0; n = len(p.idle) {
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		if now.Sub(c.idleAt) < appIdleConnTimeout {
			p.mu.Unlock()
			return c, nil
		}
		c.conn.Close()
	}
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errPoolClosed
	}
	nc, err := p.dialer.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	c := &appConn{conn: nc, headLimit: -1}
	c.abortFn = c.abort
	c.br = bufio.NewReaderSize(c, appBufferSize)
	c.bw = bufio.NewWriterSize(nc, appBufferSize)
	return c, nil
}

// put keeps c for the next request, or closes it when the pool is full.
func (p *connPool) put(c *appConn) {
	c.reused = true
	c.idleAt = time.Now()
	p.mu.Lock()
	if p.closed || len(p.idle) >= p.maxIdle {
		p.mu.Unlock()
		c.conn.Close()
		return
	}
	p.idle = append(p.idle, c)
	if p.reaper == nil {
		p.reaper = time.AfterFunc(appIdleConnTimeout, p.reap)
	}
	p.mu.Unlock()
}

// reap closes the connections idle past appIdleConnTimeout and re-arms
// itself while any stay.
func (p *connPool) reap() {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	// The stack is oldest first: the expired ones are at its bottom.
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idleAt) >= appIdleConnTimeout {
		p.idle[n].conn.Close()
		n++
	}
	p.idle = append(p.idle[:0], p.idle[n:]...)
	clear(p.idle[len(p.idle):cap(p.idle)])
	if len(p.idle) == 0 || p.closed {
		p.reaper = nil
		return
	}
	p.reaper = time.AfterFunc(appIdleConnTimeout-now.Sub(p.idle[0].idleAt), p.reap)
}

// closeIdle closes every idle connection; with stop, the pool also
// refuses new requests and closes connections handed back.
func (p *connPool) closeIdle(stop bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.idle {
		c.conn.Close()
	}
	clear(p.idle)
	p.idle = p.idle[:0]
	if stop {
		p.closed = true
	}
}

// Read feeds the connection's bufio.Reader, enforcing headLimit.
func (c *appConn) Read(b []byte) (int, error) {
	if c.headLimit < 0 {
		return c.conn.Read(b)
	}
	if c.headLimit == 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(b)) > c.headLimit {
		b = b[:c.headLimit]
	}
	n, err := c.conn.Read(b)
	c.headLimit -= int64(n)
	return n, err
}

// drained reports whether the answer to a request with method left
// nothing behind on c: no byte buffered past it and, when the answer's
// end is not its own framing but the request's or the status's (a HEAD
// answer, a 204 or a 304, after which an app may wrongly write a body),
// none waiting on the socket either. A byte left over would be read as
// the next request's answer, and the next request may be another
// user's; http.Transport closes such a connection too ("Unsolicited
// response received on idle HTTP channel"). The buffered count is free;
// the socket is asked (one system call) only for the ambiguous answers.
// Bytes an app writes later still than this check are beyond it, as they
// are beyond http.Transport's idle reader once the connection is reused.
func (c *appConn) drained(method string, status int) bool {
	if c.br.Buffered() > 0 {
		return false
	}
	if method != http.MethodHead && status != http.StatusNoContent && status != http.StatusNotModified {
		return true
	}
	return quiet(c.conn)
}

// abort makes a read or write in progress on c fail at once; c cannot
// be used again.
func (c *appConn) abort() { c.conn.SetDeadline(aLongTimeAgo) }

// aLongTimeAgo is a deadline in the past.
var aLongTimeAgo = time.Unix(1, 0)
