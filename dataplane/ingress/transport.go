package ingress

import (
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/knitops/knit/dataplane/forward"
)

// retryBackoff is the wait before each retry of a refused connection: an
// endpoint set switching between replicas and activators settles in well
// under a second.
var retryBackoff = []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}

// retryTransport picks the endpoint for each attempt from the current
// table and retries only when the connection was refused or no endpoint
// was known — the request never reached an app, so a retry is safe.
type retryTransport struct {
	next  http.RoundTripper
	table *atomic.Pointer[Table]
}

var errNoEndpoints = errors.New("no ready endpoints")

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rev := ""
	routed, _ := req.Context().Value(targetKey{}).(*target)
	if routed != nil {
		rev = routed.revision
	}
	body := forward.Hold(req)
	var lastErr error
	for _, wait := range retryBackoff {
		if err := forward.Pause(req.Context(), wait); err != nil {
			return nil, err
		}
		b := t.table.Load().revisions[rev]
		addr := ""
		if b != nil {
			addr = b.addr()
		}
		if addr == "" && routed != nil {
			// The table moved on after the request was routed (a rollout
			// took the Revision off it): the replicas it was routed to
			// serve until their Revision drains, and a refused dial
			// comes back here.
			addr = routed.addr()
		}
		if addr == "" {
			lastErr = fmt.Errorf("%w for revision %s", errNoEndpoints, rev)
			continue
		}
		req.URL.Host = addr
		resp, err := t.next.RoundTrip(req)
		if err == nil || !forward.Refused(err) || body.Started() {
			return resp, err
		}
		lastErr = err
	}
	return nil, lastErr
}
