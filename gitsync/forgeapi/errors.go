package forgeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/knitops/knit/gitsync/forge"
)

// APIError is a forge's refusal of a call: a status code and the forge's
// own message, e.g. 405 "Pull Request is not mergeable" or 422
// "Validation Failed: description is too long". Calls fail with it at
// once for 4xx other than 429, and wrap the last one when retries run out.
type APIError struct {
	// Provider that answered.
	Provider forge.Forge
	// Method and Path (escaped, no host or query) of the request.
	Method, Path string
	// Status is the HTTP status code.
	Status int
	// Message is what the forge said, from its JSON error body (message,
	// errors[].message, error) or the start of a non-JSON one.
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s API %s %s: HTTP %d: %q", e.Provider, e.Method, e.Path, e.Status, e.Message)
}

// RateLimitError is a call refused for a rate limit that lasts beyond
// the retry budget. Retry after Reset; Unwrap gives the forge's answer.
type RateLimitError struct {
	// Reset is when the forge will take calls again, by its headers
	// (Retry-After or X-RateLimit-Reset), or the backoff knit would have
	// waited when it said nothing.
	Reset time.Time
	// Err is the forge's answer (429, or GitHub's 403).
	Err *APIError
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited until %s: %v", e.Reset.UTC().Format(time.RFC3339), e.Err)
}

// Unwrap returns the forge's answer, so errors.As finds the *APIError too.
func (e *RateLimitError) Unwrap() error { return e.Err }

// errCrossHostRedirect stops a redirect that would carry the token to
// another host; it is not retried.
var errCrossHostRedirect = errors.New("redirect to another host refused: the token stays with the forge")

// maxMessage bounds an APIError's message: enough for any forge's
// sentence, not a whole HTML error page.
const maxMessage = 300

// forgeMessage extracts the forge's explanation from an error body:
// GitHub {"message","errors":[{"message"|"code","field"}]}, Gitea
// {"message"}, GitLab {"message": "…" or {field: [problems]}} or
// {"error","error_description"}; else the body's text.
func forgeMessage(body []byte) string {
	var doc struct {
		Message          json.RawMessage `json:"message"`
		Errors           json.RawMessage `json:"errors"`
		Error            string          `json:"error"`
		ErrorDescription string          `json:"error_description"`
	}
	var msg string
	if json.Unmarshal(body, &doc) == nil {
		msg = jsonText(doc.Message)
		if details := githubErrors(doc.Errors); details != "" {
			msg = strings.TrimSpace(msg + ": " + details)
		}
		if msg == "" {
			msg = doc.Error
			if doc.ErrorDescription != "" {
				msg = strings.TrimPrefix(msg+": "+doc.ErrorDescription, ": ")
			}
		}
	}
	if msg == "" {
		msg = string(bytes.TrimSpace(body))
	}
	msg = strings.Map(printable, msg)
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
	}
	return msg
}

// printable keeps a forge's message to one line of visible text for
// logs: control characters (terminal escapes, newlines) become spaces.
func printable(r rune) rune {
	if unicode.IsControl(r) || r == utf8.RuneError {
		return ' '
	}
	return r
}

// jsonText is a JSON string's value, or other JSON compacted.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// githubErrors joins GitHub's validation errors, each its message or
// "field code".
func githubErrors(raw json.RawMessage) string {
	var errs []struct {
		Message string `json:"message"`
		Field   string `json:"field"`
		Code    string `json:"code"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &errs) != nil {
		return jsonText(raw)
	}
	var parts []string
	for _, e := range errs {
		if e.Message != "" {
			parts = append(parts, e.Message)
		} else if e.Field != "" || e.Code != "" {
			parts = append(parts, strings.TrimSpace(e.Field+" "+e.Code))
		}
	}
	return strings.Join(parts, "; ")
}
