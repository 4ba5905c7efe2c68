package forge

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ignoredError marks a well-formed, verified webhook knit does not act on
// (a ping, an issue comment, a label change); the Receiver answers Status.
type ignoredError struct {
	status int
	reason string
}

func (e *ignoredError) Error() string { return "ignored: " + e.reason }

// ignore returns an ignoredError answered with 202 Accepted.
func ignore(format string, args ...any) error {
	return &ignoredError{status: http.StatusAccepted, reason: fmt.Sprintf(format, args...)}
}

// isIgnored reports whether err says to ignore the webhook, and how to answer.
func isIgnored(err error) (*ignoredError, bool) {
	var ie *ignoredError
	ok := errors.As(err, &ie)
	return ie, ok
}

// jsonBody returns the JSON document of a webhook. GitHub and Gitea can be
// configured to send application/x-www-form-urlencoded bodies with the JSON
// in the payload field; the signature still covers the raw body.
func jsonBody(h http.Header, body []byte) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return body, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("malformed form body: %w", err)
	}
	payload := form.Get("payload")
	if payload == "" {
		return nil, errors.New("form body has no payload field")
	}
	return []byte(payload), nil
}

// decode unmarshals a payload, naming what was being read when it fails.
func decode(body []byte, v any, what string) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("malformed %s payload: %w", what, err)
	}
	return nil
}

// pushEvent fills and checks the fields every forge's push shares.
// Pushes of tags and other non-branch refs are ignored: knit tracks branches.
func pushEvent(what, ref, before, after string, deleted bool) (Event, error) {
	if ref == "" {
		return Event{}, fmt.Errorf("%s payload: missing ref", what)
	}
	branch, ok := strings.CutPrefix(ref, branchPrefix)
	if !ok || branch == "" {
		return Event{}, ignore("%s to %s is not a branch", what, ref)
	}
	deleted = deleted || after == zeroSHA
	if after == "" && !deleted {
		return Event{}, fmt.Errorf("%s payload: missing after (the new head commit)", what)
	}
	return Event{Kind: KindPush, Ref: ref, Branch: branch, Before: before, After: after, Deleted: deleted}, nil
}

// checkPullRequest reports the first missing field of a pull-request event.
func checkPullRequest(what string, e Event) error {
	switch {
	case e.Number <= 0:
		return fmt.Errorf("%s payload: missing or invalid number %d", what, e.Number)
	case e.HeadBranch == "":
		return fmt.Errorf("%s payload: missing head branch", what)
	case e.HeadSHA == "":
		return fmt.Errorf("%s payload: missing head commit", what)
	case e.BaseBranch == "":
		return fmt.Errorf("%s payload: missing base branch", what)
	}
	return nil
}

// firstNonEmpty returns the first of vs that is not empty.
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// payloadTimes are the layouts forges write timestamps in: RFC 3339
// (GitHub, Gitea, newer GitLab) and GitLab's older "… UTC" form.
var payloadTimes = []string{time.RFC3339, "2006-01-02 15:04:05 MST", "2006-01-02 15:04:05 -0700"}

// parseTime reads a payload's timestamp; zero when absent or unreadable,
// which only turns off the staleness check it feeds.
func parseTime(s string) time.Time {
	for _, layout := range payloadTimes {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// headerOf returns the first of names set in h, so that Forgejo's
// X-Forgejo-* headers work where Gitea's are expected.
func headerOf(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}
