package dev

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The activator keeps its port across restarts, so the endpoints of
// every revision at zero stay true; when another process took the port it
// moves, and remembers where.
func TestActivatorKeepsItsPortAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	first, err := listenActivator(dir)
	if err != nil {
		t.Fatal(err)
	}
	port := first.port()
	first.srv.Listener.Close()

	again, err := listenActivator(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.srv.Listener.Close()
	if again.port() != port {
		t.Errorf("after a restart the activator listens on %d, want its last port %d", again.port(), port)
	}

	moved, err := listenActivator(dir) // the port is taken now
	if err != nil {
		t.Fatal(err)
	}
	defer moved.srv.Listener.Close()
	if moved.port() == port {
		t.Fatalf("two listeners on port %d", port)
	}
	data, err := os.ReadFile(filepath.Join(dir, activatorPortFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(data)); got != strconv.Itoa(int(moved.port())) {
		t.Errorf("remembered port %s, want the new %d", got, moved.port())
	}
}
