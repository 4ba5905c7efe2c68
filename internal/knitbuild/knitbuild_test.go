//go:build !unit

package knitbuild

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"
)

// TestBuildLinksKnitQueueStatically: the queue-proxy every knit dev
// replica runs maps no dynamic loader and no shared library.
func TestBuildLinksKnitQueueStatically(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	knit, err := Build(t.Context(), root, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(knit); err != nil {
		t.Fatalf("knit not built: %v", err)
	}
	f, err := elf.Open(filepath.Join(dir, "knit-queue"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("knit-queue asks for a dynamic loader (PT_INTERP): it was linked with cgo")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Errorf("knit-queue needs shared libraries %v, want none", libs)
	}
}
