package forgeapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxPages bounds a listing: 50 pages of 100 comments is far more than a
// pull request has, and a forge answering "next" forever is stopped.
const maxPages = 50

// getAll GETs path and every further page its answers link to, in order:
// the Link header's rel="next" (GitHub, GitLab, Gitea's paginated
// lists), else GitLab's X-Next-Page.
func getAll[T any](ctx context.Context, t *transport, path string, query url.Values) ([]T, error) {
	var all []T
	for range maxPages {
		var page []T
		h, err := t.do(ctx, call{method: http.MethodGet, path: path, query: query, out: &page})
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next := nextLink(h.Get("Link")); next != "" {
			path, query = next, nil // the link carries the query
			continue
		}
		if n := strings.TrimSpace(h.Get("X-Next-Page")); n != "" {
			q := url.Values{}
			for k, vs := range query {
				q[k] = vs
			}
			q.Set("page", n)
			query = q
			continue
		}
		return all, nil
	}
	return nil, fmt.Errorf("%s API GET %s: more than %d pages", t.provider, path, maxPages)
}

// nextLink returns the rel="next" URL of an RFC 8288 Link header, or "".
func nextLink(header string) string {
	for _, link := range strings.Split(header, ",") {
		target, params, ok := strings.Cut(link, ";")
		if !ok {
			continue
		}
		target = strings.TrimSpace(target)
		if !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if !strings.EqualFold(strings.TrimSpace(k), "rel") {
				continue
			}
			for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(v), `"`)) {
				if strings.EqualFold(rel, "next") {
					return target[1 : len(target)-1]
				}
			}
		}
	}
	return ""
}
