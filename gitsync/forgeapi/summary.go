package forgeapi

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/knitops/knit/gitsync/egress"
)

// Summary is what may be shown of a failed call where the repository's
// users read it (a PullRequest's condition, an Event): knit's own words,
// never the forge's answer. Whoever controls the address a GitRepository
// points at writes that answer, so quoting it would turn knit into a way
// to read, or plant text in, places the repository's users can see. The
// whole error, with the forge's bounded and sanitized message, is for
// the controller's log.
func Summary(err error) string {
	var (
		denied *egress.DeniedError
		rl     *RateLimitError
		ae     *APIError
		ue     *url.Error
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &denied):
		return denied.Error()
	case errors.As(err, &rl):
		return fmt.Sprintf("the forge rate-limits knit until %s", rl.Reset.UTC().Format(time.RFC3339))
	case errors.As(err, &ae):
		return fmt.Sprintf("%s API %s %s answered HTTP %d: %s", ae.Provider, ae.Method, ae.Path, ae.Status, statusHint(ae.Status))
	case errors.Is(err, errCrossHostRedirect):
		return errCrossHostRedirect.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "the forge API did not answer in time"
	case errors.As(err, &ue):
		return fmt.Sprintf("could not reach the forge API (%s %s)", ue.Op, redactURL(ue.URL))
	}
	return "the forge API call failed; see the controller's log"
}

// statusHint says what an HTTP status means for knit's calls.
func statusHint(status int) string {
	switch {
	case status == 401:
		return "the API token was refused"
	case status == 403:
		return "the API token may not do this"
	case status == 404:
		return "not found: check the repository URL and the token's access"
	case status == 405 || status == 409:
		return "not mergeable, or the head moved since it was analysed"
	case status == 422:
		return "the forge refused the request"
	case status >= 500:
		return "the forge failed"
	}
	return "the call was refused"
}
