package forgeapi

import (
	"context"
	"math/rand/v2"
	"time"
)

// clock is the time the retry loop reads and waits on.
type clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, whichever is first, and returns
	// ctx's error in the latter case.
	Sleep(ctx context.Context, d time.Duration) error
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoff is the wait before retry number n (1 for the first): MinBackoff
// doubled n-1 times, capped at MaxBackoff, then jittered into its upper
// half so that many knit replicas hitting one forge spread out without
// any retry coming much sooner than planned.
func (r Retry) backoff(n int) time.Duration {
	d := r.MinBackoff
	for i := 1; i < n && d < r.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, r.MaxBackoff)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(half+1)
}
