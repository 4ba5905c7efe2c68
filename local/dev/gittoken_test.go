package dev

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGitToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	first, err := loadGitToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 64 {
		t.Errorf("token %q: want 64 hex digits", first)
	}
	fi, err := os.Stat(filepath.Join(dir, gitTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("token file mode %v, want 0600", perm)
	}
	again, err := loadGitToken(dir)
	if err != nil || again != first {
		t.Errorf("second start: %q, %v; want the same token %q", again, err, first)
	}

	if err := os.WriteFile(filepath.Join(dir, gitTokenFile), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadGitToken(dir); err == nil {
		t.Error("an empty token file was accepted")
	}
	if err := os.Remove(filepath.Join(dir, gitTokenFile)); err != nil {
		t.Fatal(err)
	}
	if fresh, err := loadGitToken(dir); err != nil || fresh == first {
		t.Errorf("after deleting the file: %q, %v; want a new token", fresh, err)
	}
}
