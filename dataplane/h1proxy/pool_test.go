package h1proxy

import (
	"context"
	"io"
	"net"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// The pool keeps connections for reuse up to its size, closes the ones
// handed back beyond it, and refuses requests once closed.
func TestConnPool(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c)
		}
	}()
	p := NewPool(ln.Addr().String(), 1)
	ctx := context.Background()
	a, err := p.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.Put(a)
	p.Put(b) // beyond maxIdle: closed
	if _, err := b.conn.Write([]byte("x")); err == nil {
		t.Error("a connection handed back to a full pool is still open")
	}
	if got, err := p.Get(ctx); err != nil || got != a || !got.reused {
		t.Errorf("get after put = %p (reused %t), %v; want the idle connection %p back", got, got != nil && got.reused, err, a)
	}
	p.Put(a)
	p.CloseIdle(true)
	if _, err := a.conn.Write([]byte("x")); err == nil {
		t.Error("an idle connection is still open after CloseIdle")
	}
	if _, err := p.Get(ctx); err != ErrPoolClosed {
		t.Errorf("get from a closed pool = %v, want ErrPoolClosed", err)
	}
}

// Connections idle past IdleTimeout are closed by the pool's
// timer, oldest first, and a later request dials anew.
func TestConnPoolReapsIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPool("unused:0", 10)
		pipe := func() (*Conn, net.Conn) {
			a, b := net.Pipe()
			return &Conn{conn: a, headLimit: -1}, b
		}
		old, oldPeer := pipe()
		p.Put(old)
		time.Sleep(IdleTimeout / 2)
		young, youngPeer := pipe()
		p.Put(young)

		time.Sleep(IdleTimeout/2 + time.Second)
		if _, err := oldPeer.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("the connection idle for %v: read %v, want EOF (closed)", IdleTimeout, err)
		}
		p.mu.Lock()
		idle := slices.Clone(p.idle)
		p.mu.Unlock()
		if len(idle) != 1 || idle[0] != young {
			t.Errorf("idle after the first expiry = %v, want only the younger connection", idle)
		}
		time.Sleep(IdleTimeout / 2)
		if _, err := youngPeer.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("the younger connection: read %v, want EOF (closed)", err)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.idle) != 0 || p.reaper != nil {
			t.Errorf("pool after every expiry: %d idle, reaper armed %t; want none", len(p.idle), p.reaper != nil)
		}
	})
}
