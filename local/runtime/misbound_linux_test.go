package runtime

import (
	"net"
	"slices"
	"syscall"
	"testing"
)

func TestListeningPortsOfOwnGroup(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ln6, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Fatal(err) // a machine without IPv6 loopback: say so rather than skip
	}
	defer ln6.Close()
	conn, err := net.Dial("tcp", ln.Addr().String()) // connected sockets are no listeners
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	got, err := listeningPorts(syscall.Getpgrp())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []net.Addr{ln.Addr(), ln6.Addr()} {
		if !slices.Contains(got, int32(want.(*net.TCPAddr).Port)) {
			t.Errorf("listeningPorts = %v, want %s among them", got, want)
		}
	}
	if local := int32(conn.LocalAddr().(*net.TCPAddr).Port); slices.Contains(got, local) {
		t.Errorf("listeningPorts = %v holds %d, a connection's port", got, local)
	}
	if !slices.IsSorted(got) {
		t.Errorf("listeningPorts = %v, not sorted", got)
	}
}
