//go:build !race

package ingress

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Choosing a request's Revision runs on every request and allocates
// nothing, tag-header routing on or off, a tag named or not. Counted
// without the race detector, whose instrumentation allocates.
func TestRouteAllocations(t *testing.T) {
	for _, bo := range benchOptions {
		tbl := bo.opts.Build(benchRoutes(), nil)
		for _, tag := range []string{"", "old", "nope"} {
			req := httptest.NewRequest(http.MethodGet, "http://hello.default.localhost/", nil)
			if tag != "" {
				req.Header.Set(TagHeader, tag)
			}
			if n := testing.AllocsPerRun(100, func() { tbl.route(req).pick() }); n != 0 {
				t.Errorf("%s, tag %q: %v allocations a request, want none", bo.name, tag, n)
			}
		}
	}
}
