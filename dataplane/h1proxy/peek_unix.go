//go:build linux || darwin

package h1proxy

import (
	"net"
	"syscall"
)

// quiet reports whether nothing waits to be read on conn, without
// waiting: a non-blocking MSG_PEEK, one system call. False when bytes
// are waiting, the upstream closed its end, or the check failed.
func quiet(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var (
		perr error
		b    [1]byte
	)
	if err := rc.Read(func(fd uintptr) bool {
		_, _, perr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait for the poller: an answer now is the point
	}); err != nil {
		return false
	}
	// No error is a byte waiting or, with none read, the upstream's close.
	return perr == syscall.EAGAIN || perr == syscall.EWOULDBLOCK
}
