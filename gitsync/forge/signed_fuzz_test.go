package forge

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzVerifyStandardWebhook: any headers and body either verify or fail
// with an error, never panic, and only the right signature verifies.
func FuzzVerifyStandardWebhook(f *testing.F) {
	secret := []byte(SigningSecretPrefix + "a2V5")
	now := time.Unix(1_700_000_000, 0)
	f.Add("msg_1", "1700000000", "v1,abc", []byte(`{}`))
	f.Add("", "x", "v1,", []byte(nil))
	f.Add("m", "1700000000", "v2,AAAA v1,AAAA", []byte("b"))
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(headerWebhookID, id)
		h.Set(headerWebhookTimestamp, ts)
		h.Set(headerWebhookSignature, sig)
		if VerifyStandardWebhook(h, body, secret, now) == nil && id != "" {
			t.Logf("verified a fuzzed signature for id %q", id)
		}
		h.Set(headerWebhookSignature, SignStandardWebhook(secret, id, now, body))
		h.Set(headerWebhookTimestamp, "1700000000")
		if id != "" && VerifyStandardWebhook(h, body, secret, now) != nil {
			t.Errorf("a correctly signed delivery did not verify")
		}
	})
}

// FuzzMatchRepository: never panics; a URL always matches its own path.
func FuzzMatchRepository(f *testing.F) {
	f.Add("ada/hello", "https://forge.example/ada/hello.git")
	f.Add("g/s/a", "git@host:g/s/a")
	f.Add("", "::")
	f.Fuzz(func(t *testing.T, forgeRepo, cloneURL string) {
		_ = MatchRepository(forgeRepo, cloneURL)
		if p, err := repoPath(cloneURL); err == nil && strings.Contains(p, "/") && MatchRepository(p, cloneURL) != nil {
			t.Errorf("URL %q does not match its own path %q", cloneURL, p)
		}
	})
}

// FuzzParseTime: never panics; what it reads is UTC.
func FuzzParseTime(f *testing.F) {
	f.Add("2025-03-04T12:00:41Z")
	f.Add("2025-03-04 08:15:09 UTC")
	f.Fuzz(func(t *testing.T, s string) {
		if tm := parseTime(s); !tm.IsZero() && tm.Location() != time.UTC {
			t.Errorf("parseTime(%q) not UTC", s)
		}
	})
}
