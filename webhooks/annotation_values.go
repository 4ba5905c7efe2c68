package webhooks

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Parsers for annotation values: each reports a refused value on the key
// the user spelled, with the accepted range.

// intIn parses an integer annotation and checks lo ≤ n ≤ hi; ok is false
// when the key is absent or the value is refused.
func (a *annotationCheck) intIn(key autoscalingKey, lo, hi int64) (n int64, ok bool) {
	k, v, present := key.get(a.anns)
	if !present {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil:
		a.invalid(k, v, "must be an integer")
	case n < lo || n > hi:
		a.invalid(k, v, bounds(lo, hi))
	default:
		return n, true
	}
	return 0, false
}

// floatIn checks lo ≤ value ≤ hi for a number annotation.
func (a *annotationCheck) floatIn(key autoscalingKey, lo, hi float64) {
	k, v, ok := key.get(a.anns)
	if !ok {
		return
	}
	f, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil || math.IsNaN(f):
		a.invalid(k, v, "must be a number")
	case math.IsInf(hi, 1) && f < lo:
		a.invalid(k, v, fmt.Sprintf("must be at least %g", lo))
	case f < lo || f > hi:
		a.invalid(k, v, fmt.Sprintf("must be between %g and %g", lo, hi))
	}
}

// burstCapacity accepts -1 (the activator stays in the path) or ≥ 0.
func (a *annotationCheck) burstCapacity() {
	k, v, ok := burstCapacityKey.get(a.anns)
	if !ok {
		return
	}
	if f, err := strconv.ParseFloat(v, 64); err != nil || math.IsNaN(f) || (f < 0 && f != -1) {
		a.invalid(k, v, "must be -1 (keep the activator in the path) or a number of 0 or more")
	}
}

// durationIn checks a duration annotation: lo ≤ d ≤ hi, whole seconds.
// It reports whether the key is present and valid.
func (a *annotationCheck) durationIn(key autoscalingKey, lo, hi time.Duration) bool {
	k, v, ok := key.get(a.anns)
	if !ok {
		return false
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		a.invalid(k, v, `must be a duration such as "60s" or "5m"`)
	case d < lo || d > hi:
		a.invalid(k, v, fmt.Sprintf("must be between %s and %s", lo, hi))
	case d.Truncate(time.Second) != d:
		a.invalid(k, v, "must be a whole number of seconds")
	default:
		return true
	}
	return false
}

// bounds says which integers are accepted.
func bounds(lo, hi int64) string {
	return fmt.Sprintf("must be between %d and %d", lo, hi)
}
