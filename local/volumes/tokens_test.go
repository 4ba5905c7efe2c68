package volumes

import (
	"context"
	"fmt"
	"testing"
	"time"
)

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

func (c countingTokens) Token(ctx context.Context, audience string, expirationSeconds int64) ([]byte, error) {
	*c.requests++
	return fmt.Appendf(nil, "token %d", *c.requests), nil
}

// TestCachedTokensRotateWhenDue: a resync reuses a token until it is due,
// then requests a new one; each audience and lifetime has its own.
func TestCachedTokensRotateWhenDue(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	requests := 0
	cache := &TokenCache{now: func() time.Time { return now }}
	src := cache.Through(countingTokens{requests: &requests})
	get := func(audience string) string {
		t.Helper()
		tok, err := src.Token(context.Background(), audience, 600)
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
