package events

import "time"

// backoff is the wait before retry number attempt (0 for the first):
// base doubled per attempt, capped at max, then "equal jitter" — a uniform
// pick in the upper half — so sinks recovering from an outage are not hit
// by every dispatcher at once. r is a uniform random number in [0, 1).
func backoff(attempt int, base, max time.Duration, r float64) time.Duration {
	d := base
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max || d <= 0 {
		d = max
	}
	half := d / 2
	return d - half + time.Duration(r*float64(half))
}
