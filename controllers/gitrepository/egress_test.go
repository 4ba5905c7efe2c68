package gitrepository

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/knitops/knit/gitsync/egress"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// A GitRepository whose URL the egress policy refuses (here, a listener on
// loopback, where a push could point knit to steal its credentials) fails its
// Fetched condition with EgressDenied, not a generic FetchFailed.
func TestFetchFailedReason(t *testing.T) {
	cache := &gitsource.Cache{Dir: t.TempDir(), Egress: func() *egress.Policy { return &egress.Policy{} }}
	_, denied := cache.Fetch(context.Background(), "default/steal", "http://127.0.0.1:4444/steal.git", []string{"main"}, nil)
	tests := []struct {
		err  error
		want string
	}{
		{denied, ReasonEgressDenied},
		{fmt.Errorf("pass: %w", denied), ReasonEgressDenied},
		{errors.New("list branches of https://example.com/r.git: authentication required"), "FetchFailed"},
	}
	for _, tc := range tests {
		if got := fetchFailedReason(tc.err); got != tc.want {
			t.Errorf("fetchFailedReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// localDirs is the egress policy of the suite, whose repositories are
// local directories: the default policy refuses them, as it would a user's
// file:// URL, so the tests allow them explicitly.
// Tests serving over HTTP on loopback allow their listeners there too
// (allowLoopback), as an operator's egress-allow would.
func localDirs() *egress.Policy {
	loopbackAllowed.Lock()
	defer loopbackAllowed.Unlock()
	return &egress.Policy{Schemes: []string{"file"}, Allow: slices.Clone(loopbackAllowed.rules)}
}

var loopbackAllowed struct {
	sync.Mutex
	rules []egress.Rule
}

// allowLoopback lets the suite's syncs reach addr (host:port).
func allowLoopback(t *testing.T, addr string) {
	t.Helper()
	rules, err := egress.ParseRules(addr)
	if err != nil {
		t.Fatal(err)
	}
	loopbackAllowed.Lock()
	loopbackAllowed.rules = append(loopbackAllowed.rules, rules...)
	loopbackAllowed.Unlock()
}
