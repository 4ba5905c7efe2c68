package source

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPruneCheckouts(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	old, fresh := now.Add(-time.Hour), now.Add(-time.Second)
	dirs := map[string]time.Time{
		"aaaa":                 old,   // a live Revision's: kept
		"bbbb":                 old,   // nobody's: removed
		"cccc":                 fresh, // nobody's yet, just checked out: kept
		".checkout-dddd-12345": old,   // a crash's half-written one: removed
		".checkout-eeee-12345": fresh, // one being written: kept
	}
	for name, mtime := range dirs {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(dir, "cmd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := PruneCheckouts(root, func(sha string) bool { return sha == "aaaa" }, 10*time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	want := []string{filepath.Join(root, ".checkout-dddd-12345"), filepath.Join(root, "bbbb")}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	left, _ := os.ReadDir(root)
	if len(left) != 3 {
		t.Errorf("%d checkouts left, want aaaa, cccc and the one being written", len(left))
	}
	if got, err := PruneCheckouts(filepath.Join(root, "missing"), nil, 0, now); err != nil || got != nil {
		t.Errorf("a root that does not exist: %v, %v", got, err)
	}
}
