package dev

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// The fetch cache keeps the commits of Revisions whose replicas have not
// checked them out yet, and no other.
func TestNotCheckedOut(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "aaaa"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := notCheckedOut([]servingv1.Revision{
		revision("default", "hello-aaaa", "hello", "aaaa"), // checked out: the cache may drop it
		revision("default", "hello-bbbb", "hello", "bbbb"), // not yet
		revision("default", "hello-cccc", "hello", "cccc"),
		revision("default", "stamped-by-hand", "hello", ""),
		revision("default", "escapes", "hello", "../x"),
	}, dir)
	if want := []string{"bbbb", "cccc"}; !slices.Equal(got, want) {
		t.Errorf("notCheckedOut = %v, want %v", got, want)
	}
}
