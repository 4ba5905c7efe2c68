package buildproxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// tunnel answers an allowed CONNECT: it dials hostport, says 200 and
// relays bytes both ways until both sides are done or the tunnel idles.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request, hostport string) {
	ctx, cancel := context.WithTimeout(r.Context(), dialTimeout)
	up, err := p.dial(ctx, "tcp", hostport)
	cancel()
	if err != nil {
		p.dialFailed(w, r, hostport, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "CONNECT needs HTTP/1.1", http.StatusHTTPVersionNotSupported)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(down, up) {
		return
	}
	defer p.untrack(down, up)
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	relay(&bufferedConn{Conn: down, r: buf.Reader}, up)
}

// track records a tunnel's two connections for Close; false (and both
// closed) when the proxy is closed already.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.tunnels, c)
	}
}

// relay copies both ways; each side's end is passed on as a half close,
// as TLS expects, and the tunnel ends when both have.
func relay(down, up net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); pipe(up, down) }()
	go func() { defer wg.Done(); pipe(down, up) }()
	wg.Wait()
}

// pipe copies from src to dst until src ends or idles for tunnelIdle,
// then closes dst's writing side (all of dst when it cannot half close).
func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, idleReader{src})
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = dst.Close()
}

// idleReader gives every Read tunnelIdle to return something.
type idleReader struct{ c net.Conn }

func (r idleReader) Read(b []byte) (int, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(tunnelIdle))
	return r.c.Read(b)
}

// bufferedConn is a hijacked connection whose first bytes may already
// sit in the server's reader (a client that sends its TLS hello without
// waiting for the 200).
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite half-closes the underlying TCP connection.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
