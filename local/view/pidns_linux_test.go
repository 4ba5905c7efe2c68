package view

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A PID namespace's holder is this test binary re-executed as knit-pause
// (init), PID 1 of a namespace of its own, carrying the marker it was
// given, until Close kills it.
func TestPIDNamespace(t *testing.T) {
	h, err := OpenPIDNamespace("KNIT_TEST_MARKER=x")
	if os.Geteuid() != 0 {
		// Without root the kernel refuses a new PID namespace, and the
		// caller is told so rather than handed a holder of nothing.
		if !errors.Is(err, syscall.EPERM) || h != nil {
			t.Fatalf("as uid %d: OpenPIDNamespace = %v, %v; want no holder and EPERM", os.Geteuid(), h, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !h.Alive() {
		t.Error("the holder is not alive once open")
	}
	own, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	if ns, err := os.Readlink(h.Path()); err != nil || ns == own {
		t.Errorf("the holder's PID namespace %q (%v) is not a new one (ours: %q)", ns, err, own)
	}
	pid := strings.TrimSuffix(strings.TrimPrefix(h.Path(), "/proc/"), "/ns/pid")
	if env, err := os.ReadFile("/proc/" + pid + "/environ"); err != nil || !strings.Contains(string(env), "KNIT_TEST_MARKER=x") {
		t.Errorf("the holder's environment %q (%v) lacks its marker", env, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if h.Alive() {
		t.Error("the holder is alive after Close")
	}
}
