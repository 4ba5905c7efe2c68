package certs

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func TestBundleCheck(t *testing.T) {
	names := ServiceNames("knit-webhook", "knit-system")
	fresh, err := Generate(now, 90*24*time.Hour, names)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Generate(now, 90*24*time.Hour, names)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		b       Bundle
		at      time.Time
		margin  time.Duration
		names   []string
		wantErr string // "" means the bundle is kept
	}{
		{"fresh", fresh, now, 30 * 24 * time.Hour, names, ""},
		{"inside the margin of expiry", fresh, now.Add(61 * 24 * time.Hour), 30 * 24 * time.Hour, names, "expired"},
		{"a name it was not issued for", fresh, now, 0, []string{"other.knit-system.svc"}, "other.knit-system.svc"},
		{"empty Secret", Bundle{}, now, 0, names, "serving certificate"},
		{"certificate of another CA", Bundle{CACert: other.CACert, Cert: fresh.Cert, Key: fresh.Key}, now, 0, names, "unknown authority"},
		{"key of another certificate", Bundle{CACert: fresh.CACert, Cert: fresh.Cert, Key: other.Key}, now, 0, names, "private key does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.Check(tt.at, tt.margin, tt.names)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Check = %v, want the bundle kept", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Check = %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestWithPreviousKeepsTrustingTheOldCAUntilItExpires(t *testing.T) {
	names := ServiceNames("w", "ns")
	old, err := Generate(now, time.Hour, names)
	if err != nil {
		t.Fatal(err)
	}
	next, err := Generate(now.Add(50*time.Minute), time.Hour, names)
	if err != nil {
		t.Fatal(err)
	}
	both := next.WithPrevious(old.CACert, now.Add(50*time.Minute))
	if !bytes.HasPrefix(both.CACert, next.CACert) || !bytes.Contains(both.CACert, old.CACert) {
		t.Fatalf("caBundle during rotation = %q, want the new CA then the old one", both.CACert)
	}
	// A replica still serving the old certificate is trusted by the new bundle.
	stale := Bundle{CACert: both.CACert, Cert: old.Cert, Key: old.Key}
	if err := stale.Check(now.Add(50*time.Minute), 0, names); err != nil {
		t.Errorf("old certificate under the rotated caBundle: %v", err)
	}
	// Chained rotations carry one previous CA, not all of them.
	third, err := Generate(now.Add(55*time.Minute), time.Hour, names)
	if err != nil {
		t.Fatal(err)
	}
	third = third.WithPrevious(both.CACert, now.Add(55*time.Minute))
	if got := bytes.Count(third.CACert, []byte("BEGIN CERTIFICATE")); got != 2 || !bytes.Contains(third.CACert, next.CACert) || bytes.Contains(third.CACert, old.CACert) {
		t.Errorf("caBundle after two rotations holds %d CAs, want the newest and the one before it only", got)
	}
	if expired := next.WithPrevious(old.CACert, now.Add(2*time.Hour)); !bytes.Equal(expired.CACert, next.CACert) {
		t.Error("an expired previous CA is still trusted")
	}
}
