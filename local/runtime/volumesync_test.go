package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteAtomic: a volume is laid out as the kubelet lays it out, and an
// update swaps every file at once: new content, new names, the names the
// new payload lacks gone, one data directory left.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	first := payload{"config": {data: []byte("v1"), mode: 0o644}, "tls/key": {data: []byte("k1"), mode: 0o400}}
	if err := writeAtomic(dir, first); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, dir, map[string]string{"config": "0644 v1", "tls/key": "0400 k1"})
	if target, err := os.Readlink(filepath.Join(dir, "config")); err != nil || target != "..data/config" {
		t.Errorf("config links to %q (%v), want ..data/config", target, err)
	}

	second := payload{"config": {data: []byte("v2"), mode: 0o600}, "extra": {data: []byte("new"), mode: 0o644}}
	if err := writeAtomic(dir, second); err != nil {
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

func TestTokenDue(t *testing.T) {
	issued := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		lifetime time.Duration
		age      time.Duration
		want     bool
	}{
		{"fresh", time.Hour, time.Minute, false},
		{"just before 80% of its life", time.Hour, 47*time.Minute + 59*time.Second, false},
		{"at 80% of its life", time.Hour, 48 * time.Minute, true},
		{"expired", time.Hour, 2 * time.Hour, true},
		{"a year's token is rotated daily", 365 * 24 * time.Hour, 24 * time.Hour, true},
		{"a year's token, a day less a second", 365 * 24 * time.Hour, 24*time.Hour - time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tokenDue(issued, tt.lifetime, issued.Add(tt.age)); got != tt.want {
				t.Errorf("tokenDue(age %s of %s) = %v, want %v", tt.age, tt.lifetime, got, tt.want)
			}
		})
	}
}

// countingTokens counts the token requests that reach the source.
type countingTokens struct {
	fakeSources
	requests *int
}

func (c countingTokens) token(ctx context.Context, audience string, expirationSeconds int64) ([]byte, error) {
	*c.requests++
	return fmt.Appendf(nil, "token %d", *c.requests), nil
}

// TestCachedTokensRotateWhenDue: a resync reuses a token until it is due,
// then requests a new one; each audience and lifetime has its own.
func TestCachedTokensRotateWhenDue(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	requests := 0
	cache := &tokenCache{now: func() time.Time { return now }}
	src := cache.through(countingTokens{requests: &requests})
	get := func(audience string) string {
		t.Helper()
		tok, err := src.token(context.Background(), audience, 600)
		if err != nil {
			t.Fatal(err)
		}
		return string(tok)
	}
	steps := []struct {
		advance  time.Duration
		audience string
		want     string
	}{
		{0, "api", "token 1"},
		{time.Minute, "api", "token 1"},
		{0, "vault", "token 2"},
		{7 * time.Minute, "api", "token 3"}, // 8 minutes: 80% of 600s
		{time.Second, "api", "token 3"},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if got := get(s.audience); got != s.want {
			t.Errorf("step %d (%s): %q, want %q", i, s.audience, got, s.want)
		}
	}
}
