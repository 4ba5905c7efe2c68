package volumes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteAtomic: a volume is laid out as the kubelet lays it out, and an
// update swaps every file at once: new content, new names, the names the
// new payload lacks gone, one data directory left.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	first := Payload{"config": {Data: []byte("v1"), Mode: 0o644}, "tls/key": {Data: []byte("k1"), Mode: 0o400}}
	if err := WriteAtomic(dir, first); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, dir, map[string]string{"config": "0644 v1", "tls/key": "0400 k1"})
	if target, err := os.Readlink(filepath.Join(dir, "config")); err != nil || target != "..data/config" {
		t.Errorf("config links to %q (%v), want ..data/config", target, err)
	}

	second := Payload{"config": {Data: []byte("v2"), Mode: 0o600}, "extra": {Data: []byte("new"), Mode: 0o644}}
	if err := WriteAtomic(dir, second); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, dir, map[string]string{"config": "0600 v2", "extra": "0644 new"})
	if _, err := os.Lstat(filepath.Join(dir, "tls")); !os.IsNotExist(err) {
		t.Errorf("tls, which the new payload lacks, is still there (%v)", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 4 || !strings.HasPrefix(names[0], "..20") || names[1] != "..data" || names[2] != "config" || names[3] != "extra" {
		t.Errorf("volume holds %q, want one timestamped directory, ..data, config and extra", names)
	}
}

func wantFiles(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	for name, w := range want {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, name))
		if got := fmt.Sprintf("%#o %s", fi.Mode().Perm(), data); got != w {
			t.Errorf("%s = %q, want %q", name, got, w)
		}
	}
}
