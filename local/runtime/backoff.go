package runtime

import (
	"context"
	"time"
)

// Backoff is how long a crashed container waits before it is started
// again: the kubelet's CrashLoopBackOff, but starting small, because on a
// laptop a fixed typo should be picked up in a second, not in ten.
type Backoff struct {
	// Initial is the wait after the first crash; it doubles with each
	// further crash in a row. Default 500ms.
	Initial time.Duration
	// Max caps the wait. Default 30s.
	Max time.Duration
	// Reset is how long a container must run for its next crash to count
	// as the first again. Default 60s.
	Reset time.Duration
}

func (b *Backoff) defaults() {
	if b.Initial <= 0 {
		b.Initial = 500 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 30 * time.Second
	}
	if b.Reset <= 0 {
		b.Reset = 60 * time.Second
	}
}

// Delay is the wait before the restart that follows the n-th crash in a
// row (n ≥ 1): Initial, 2×Initial, 4×Initial, … capped at Max.
func (b Backoff) Delay(n int) time.Duration {
	d := b.Initial
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// crashesInARow is the streak after a container that had crashed `streak`
// times in a row ran for `ran` and crashed again: a healthy run of at least
// Reset starts a new streak.
func (b Backoff) crashesInARow(streak int, ran time.Duration) int {
	if ran >= b.Reset {
		return 1
	}
	return streak + 1
}

// sleepCtx waits d or until ctx ends; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
