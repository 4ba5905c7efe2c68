// Package poll is how knit's tests wait for what the system does
// eventually (a reconcile, a replica turning ready, an event delivered):
// poll a condition with a timeout instead of sleeping, and on failure say
// what was last seen, so the failure explains itself.
package poll

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Until calls cond every interval until it holds, and fails t when
// timeout passes first, with the last reason cond gave.
func Until(t testing.TB, what string, interval, timeout time.Duration, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, why := cond(ctx)
		last = why
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s: %s", what, timeout, last)
	}
}
