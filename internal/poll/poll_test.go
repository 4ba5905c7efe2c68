package poll

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps a Fatalf's message instead of
// stopping the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestUntil(t *testing.T) {
	calls := 0
	r := &recorder{TB: t}
	Until(r, "third call", time.Millisecond, time.Minute, func(context.Context) (bool, string) {
		calls++
		return calls == 3, fmt.Sprintf("call %d", calls)
	})
	if r.failed != "" || calls != 3 {
		t.Errorf("a condition that holds on the third call: failed %q after %d calls", r.failed, calls)
	}

	r = &recorder{TB: t}
	Until(r, "never", time.Millisecond, 20*time.Millisecond, func(context.Context) (bool, string) {
		return false, "still 503"
	})
	if !strings.Contains(r.failed, "never: not within 20ms: still 503") {
		t.Errorf("failure message %q, want what, the timeout and the last reason", r.failed)
	}
}
