package acme

import (
	"testing"
	"time"
)

func TestRenewAt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	cases := []struct {
		name      string
		notBefore time.Time
		notAfter  time.Time
		want      time.Time
	}{
		{"90-day certificate renews on day 60", t0, t0.Add(90 * day), t0.Add(60 * day)},
		{"6-day certificate renews with 2 days left", t0, t0.Add(6 * day), t0.Add(4 * day)},
		{"5-minute certificate renews at 3m20s", t0, t0.Add(5 * time.Minute), t0.Add(200 * time.Second)},
		{"Pebble's 5 minutes less a second", t0, t0.Add(299 * time.Second), t0.Add(299*time.Second - 299*time.Second/3)},
		{"no lifetime: due at once", t0, t0, t0},
		{"ends before it starts: due at once", t0, t0.Add(-day), t0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RenewAt(tc.notBefore, tc.notAfter)
			if !got.Equal(tc.want) {
				t.Errorf("RenewAt = %s (+%s), want %s (+%s)", got, got.Sub(t0), tc.want, tc.want.Sub(t0))
			}
			if life := tc.notAfter.Sub(tc.notBefore); life > 0 && (!got.After(tc.notBefore) || !got.Before(tc.notAfter)) {
				t.Errorf("RenewAt %s is outside the lifetime", got)
			}
		})
	}
}

func TestCertificateRenewAt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := Certificate{NotBefore: t0, NotAfter: t0.Add(90 * 24 * time.Hour)}
	if got, want := c.RenewAt(), RenewAt(c.NotBefore, c.NotAfter); !got.Equal(want) {
		t.Errorf("Certificate.RenewAt = %s, RenewAt = %s", got, want)
	}
}
