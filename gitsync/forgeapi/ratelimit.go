package forgeapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// rateLimited says whether an answer is a rate limit and how long it
// asks to wait (0: not said). 429 always is; GitHub answers 403 for its
// primary limit (X-RateLimit-Remaining: 0) and its secondary limits
// (Retry-After, or only a message; GitHub then asks for a minute).
func rateLimited(status int, h http.Header, message string, now time.Time) (bool, time.Duration) {
	if status != http.StatusTooManyRequests && status != http.StatusForbidden {
		return false, 0
	}
	if wait, ok := retryAfter(h, now); ok {
		return true, wait
	}
	if reset, ok := limitReset(h); ok {
		return true, max(reset.Sub(now), 0)
	}
	if status == http.StatusTooManyRequests {
		return true, 0
	}
	if strings.Contains(strings.ToLower(message), "rate limit") {
		return true, time.Minute
	}
	return false, 0
}

// retryAfter reads Retry-After, in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(s, 0)) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// limitReset reads an exhausted rate limit's reset time: GitHub's
// X-RateLimit-* or GitLab's RateLimit-* headers, in Unix seconds.
func limitReset(h http.Header) (time.Time, bool) {
	for _, prefix := range []string{"X-RateLimit-", "RateLimit-"} {
		if strings.TrimSpace(h.Get(prefix+"Remaining")) != "0" {
			continue
		}
		if s, err := strconv.ParseInt(strings.TrimSpace(h.Get(prefix+"Reset")), 10, 64); err == nil {
			return time.Unix(s, 0), true
		}
	}
	return time.Time{}, false
}
