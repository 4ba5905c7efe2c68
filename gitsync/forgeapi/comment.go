package forgeapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// comment is one pull-request comment (GitLab: note) as knit needs it.
type comment struct {
	ID   int64
	Body string
}

// commentStore is one forge's pull-request comment endpoints.
type commentStore interface {
	// listComments returns the pull request's comments, oldest first.
	listComments(ctx context.Context, number int64) ([]comment, error)
	createComment(ctx context.Context, number int64, body string) error
	editComment(ctx context.Context, number, id int64, body string) error
	deleteComment(ctx context.Context, number, id int64) error
}

// upsertComment implements Client.UpsertComment over a forge's comments:
// the oldest comment starting with marker is kept (edited only when its
// text differs, so a re-run makes no "edited" noise), later ones deleted.
func upsertComment(ctx context.Context, s commentStore, number int64, marker, body string) error {
	if err := checkMarker(marker); err != nil {
		return err
	}
	if number <= 0 {
		return fmt.Errorf("comment %s: pull request number %d is not positive", marker, number)
	}
	if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(body), marker)) == "" {
		return fmt.Errorf("comment %s on #%d: empty body", marker, number)
	}
	if !strings.HasPrefix(body, marker) {
		body = marker + "\n" + body
	}

	all, err := s.listComments(ctx, number)
	if err != nil {
		return fmt.Errorf("comment %s on #%d: list comments: %w", marker, number, err)
	}
	var mine []comment
	for _, c := range all {
		if strings.HasPrefix(strings.TrimSpace(c.Body), marker) {
			mine = append(mine, c)
		}
	}
	if len(mine) == 0 {
		if err := s.createComment(ctx, number, body); err != nil {
			return fmt.Errorf("comment %s on #%d: create: %w", marker, number, err)
		}
		return nil
	}
	if normalize(mine[0].Body) != normalize(body) {
		if err := s.editComment(ctx, number, mine[0].ID, body); err != nil {
			return fmt.Errorf("comment %s on #%d: edit comment %d: %w", marker, number, mine[0].ID, err)
		}
	}
	var errs []error
	for _, dup := range mine[1:] {
		if err := s.deleteComment(ctx, number, dup.ID); err != nil {
			errs = append(errs, fmt.Errorf("comment %s on #%d: delete duplicate %d: %w", marker, number, dup.ID, err))
		}
	}
	return errors.Join(errs...)
}

// checkMarker insists on an HTML comment, which forges render as nothing,
// on one line, so that it can open a comment without showing.
func checkMarker(m string) error {
	if !strings.HasPrefix(m, "<!--") || !strings.HasSuffix(m, "-->") || len(m) < len("<!-- x -->") || strings.ContainsAny(m, "\r\n") {
		return fmt.Errorf("comment marker %q is not a one-line HTML comment like <!-- knit:preview -->", m)
	}
	return nil
}

// normalize undoes what forges do to a stored body (CRLF line ends,
// trimmed trailing space) so an unchanged comment is not edited again.
func normalize(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}
