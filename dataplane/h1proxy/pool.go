package h1proxy

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

// Limits of a pool, http.Transport's as package forward configures it.
const (
	dialTimeout = 5 * time.Second
	keepAlive   = 30 * time.Second
	// IdleTimeout is how long a connection stays idle in a pool before
	// it is closed.
	IdleTimeout = 90 * time.Second
	// MaxResponseHeaderBytes bounds an upstream's response head, as
	// http.Transport's default MaxResponseHeaderBytes does.
	MaxResponseHeaderBytes = 10 << 20
	bufferSize             = 4 << 10
)

// ErrPoolClosed is a request to a pool that was closed for good.
var ErrPoolClosed = errors.New("h1proxy: the connection pool is closed")

// errHeadTooLarge is http.Transport's error for an oversized response head.
var errHeadTooLarge = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", MaxResponseHeaderBytes)

// Pool keeps idle HTTP/1.1 connections to one upstream address. It is a
// LIFO stack under one mutex: there is no per-host bookkeeping, and the
// most recently used connection is the warmest; connections idle past
// IdleTimeout are closed, by a timer armed only while some are idle.
type Pool struct {
	addr    string
	dialer  net.Dialer
	maxIdle int

	mu     sync.Mutex
	idle   []*Conn
	reaper *time.Timer // armed while idle is not empty
	closed bool
}

// NewPool returns a pool of connections to addr (host:port) keeping at
// most maxIdle idle.
func NewPool(addr string, maxIdle int) *Pool {
	return &Pool{
		addr:    addr,
		dialer:  net.Dialer{Timeout: dialTimeout, KeepAlive: keepAlive},
		maxIdle: maxIdle,
	}
}

// Conn is one connection to the upstream with its buffers.
type Conn struct {
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	// headLimit is how many more bytes the reader may take while a
	// response head is read; negative once the head is in.
	headLimit int64
	// reused is set once the connection served a request: a failure
	// before the upstream answered may then be a close it raced with.
	reused bool
	idleAt time.Time
	// abortFn is Abort, bound once rather than on every request.
	abortFn func()
}

// Get returns an idle connection, or dials one.
func (p *Pool) Get(ctx context.Context) (*Conn, error) {
	now := time.Now()
	p.mu.Lock()
	for n := len(p.idle); n > 0; n = len(p.idle) {
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		if now.Sub(c.idleAt) < IdleTimeout {
			p.mu.Unlock()
			return c, nil
		}
		c.conn.Close()
	}
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, ErrPoolClosed
	}
	nc, err := p.dialer.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	return newConn(nc), nil
}

func newConn(nc net.Conn) *Conn {
	c := &Conn{conn: nc, headLimit: -1}
	c.abortFn = c.Abort
	c.br = bufio.NewReaderSize(c, bufferSize)
	c.bw = bufio.NewWriterSize(nc, bufferSize)
	return c
}

// Put keeps c for the next request, or closes it when the pool is full
// or closed. Only a connection whose last answer Relay said is reusable
// may come back.
func (p *Pool) Put(c *Conn) {
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
		p.reaper = time.AfterFunc(IdleTimeout, p.reap)
	}
	p.mu.Unlock()
}

// reap closes the connections idle past IdleTimeout and re-arms itself
// while any stay.
func (p *Pool) reap() {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	// The stack is oldest first: the expired ones are at its bottom.
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idleAt) >= IdleTimeout {
		p.idle[n].conn.Close()
		n++
	}
	p.idle = append(p.idle[:0], p.idle[n:]...)
	clear(p.idle[len(p.idle):cap(p.idle)])
	if len(p.idle) == 0 || p.closed {
		p.reaper = nil
		return
	}
	p.reaper = time.AfterFunc(IdleTimeout-now.Sub(p.idle[0].idleAt), p.reap)
}

// CloseIdle closes every idle connection; with stop, the pool also
// refuses new requests and closes connections handed back.
func (p *Pool) CloseIdle(stop bool) {
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

// Idle is how many connections wait in the pool.
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// Read feeds the connection's bufio.Reader, enforcing headLimit.
func (c *Conn) Read(b []byte) (int, error) {
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

// Head is where the caller writes the request head; RoundTrip sends it.
func (c *Conn) Head() *bufio.Writer { return c.bw }

// Reused reports whether c served a request before this one: a failure
// before any answer may then be the upstream's close of an idle
// connection, and the request may go again on a new one.
func (c *Conn) Reused() bool { return c.reused }

// AbortFunc is Abort as a func value made once per connection, for
// context.AfterFunc without an allocation of its own.
func (c *Conn) AbortFunc() func() { return c.abortFn }

// Close closes the connection.
func (c *Conn) Close() error { return c.conn.Close() }

// drained reports whether the answer to a request with method left
// nothing behind on c: no byte buffered past it and, when the answer's
// end is not its own framing but the request's or the status's (a HEAD
// answer, a 204 or a 304, after which an upstream may wrongly write a
// body), none waiting on the socket either. A byte left over would be
// read as the next request's answer, and the next request may be another
// user's; http.Transport closes such a connection too ("Unsolicited
// response received on idle HTTP channel"). The buffered count is free;
// the socket is asked (one system call) only for the ambiguous answers.
// Bytes an upstream writes later still than this check are beyond it, as
// they are beyond http.Transport's idle reader once the connection is
// reused.
func (c *Conn) drained(method string, status int) bool {
	if c.br.Buffered() > 0 {
		return false
	}
	if method != http.MethodHead && status != http.StatusNoContent && status != http.StatusNotModified {
		return true
	}
	return quiet(c.conn)
}

// Abort makes a read or write in progress on c fail at once; c cannot
// be used again.
func (c *Conn) Abort() { c.conn.SetDeadline(aLongTimeAgo) }

// aLongTimeAgo is a deadline in the past.
var aLongTimeAgo = time.Unix(1, 0)
