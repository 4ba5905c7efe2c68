package autoscaling

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Knative's bounds on the values, shared with config-autoscaler's checks
// (dataplane/autoscaler) so both refuse what Knative refuses.
const (
	// WindowMin is the shortest stable window: six one-second buckets is
	// the least that still averages anything.
	WindowMin = 6 * time.Second
	// WindowMax is the longest stable window (and scale-down delay and pod
	// retention): beyond an hour the decisions are too stale to be useful.
	WindowMax = time.Hour

	PanicWindowPercentageMin = 1.0
	PanicWindowPercentageMax = 100.0
	// PanicThresholdPercentageMin is 110%: a threshold at the target itself
	// would keep the KPA panicking, and it never scales down while panicking.
	PanicThresholdPercentageMin = 110.0
	PanicThresholdPercentageMax = 1000.0

	// TargetMin is the smallest per-pod target; it keeps target divisions finite.
	TargetMin = 0.01
)

var inf = math.Inf(1)

// Error is a value a key refuses: the key as the user spelled it, the
// value, and what the key accepts, in the words the admission webhook
// answers with (the KPA quotes the same). Supported, when set, lists the
// only values accepted; Forbidden says the key may not be set at all.
type Error struct {
	Key, Value string
	Detail     string
	Supported  []string
	Forbidden  bool
}

func (e *Error) Error() string {
	if e.Forbidden {
		return fmt.Sprintf("%s: %s", e.Key, e.Detail)
	}
	return fmt.Sprintf("%s=%q: %s", e.Key, e.Value, e.Reason())
}

// Reason says what the key accepts, for a caller that names the key and
// value its own way.
func (e *Error) Reason() string {
	if e.Supported != nil {
		return fmt.Sprintf("supported values: %q", e.Supported)
	}
	return e.Detail
}

// IntKey is an integer annotation accepting Min to math.MaxInt32.
type IntKey struct {
	Key
	Min int32
}

// Parse reads k from anns: present is false when it is absent, err an
// *Error when the value is refused.
func (k IntKey) Parse(anns map[string]string) (n int32, present bool, err error) {
	key, raw, ok := k.Get(anns)
	if !ok {
		return 0, false, nil
	}
	v, perr := strconv.ParseInt(raw, 10, 64)
	switch {
	case perr != nil:
		return 0, true, &Error{Key: key, Value: raw, Detail: "must be an integer"}
	case v < int64(k.Min) || v > math.MaxInt32:
		return 0, true, &Error{Key: key, Value: raw, Detail: fmt.Sprintf("must be between %d and %d", k.Min, math.MaxInt32)}
	}
	return int32(v), true, nil
}

// FloatKey is a number annotation accepting Min to Max (Max may be +Inf);
// NaN and infinities are not numbers. orMinusOne also accepts -1, the
// target burst capacity that keeps the activator in the path.
type FloatKey struct {
	Key
	Min, Max   float64
	orMinusOne bool
}

// Parse reads k from anns, as IntKey.Parse.
func (k FloatKey) Parse(anns map[string]string) (v float64, present bool, err error) {
	key, raw, ok := k.Get(anns)
	if !ok {
		return 0, false, nil
	}
	v, perr := strconv.ParseFloat(raw, 64)
	number := perr == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
	switch {
	case k.orMinusOne && number && v == -1:
		return v, true, nil
	case k.orMinusOne && (!number || v < k.Min):
		return 0, true, &Error{Key: key, Value: raw, Detail: fmt.Sprintf("must be -1 (keep the activator in the path) or a number of %g or more", k.Min)}
	case !number:
		return 0, true, &Error{Key: key, Value: raw, Detail: "must be a number"}
	case math.IsInf(k.Max, 1) && v < k.Min:
		return 0, true, &Error{Key: key, Value: raw, Detail: fmt.Sprintf("must be at least %g", k.Min)}
	case v < k.Min || v > k.Max:
		return 0, true, &Error{Key: key, Value: raw, Detail: fmt.Sprintf("must be between %g and %g", k.Min, k.Max)}
	}
	return v, true, nil
}

// DurationKey is a duration annotation of whole seconds from Min to Max:
// the KPA counts windows in one-second buckets.
type DurationKey struct {
	Key
	Min, Max time.Duration
}

// Parse reads k from anns, as IntKey.Parse.
func (k DurationKey) Parse(anns map[string]string) (d time.Duration, present bool, err error) {
	key, raw, ok := k.Get(anns)
	if !ok {
		return 0, false, nil
	}
	d, perr := time.ParseDuration(raw)
	switch {
	case perr != nil:
		return 0, true, &Error{Key: key, Value: raw, Detail: `must be a duration such as "60s" or "5m"`}
	case d < k.Min || d > k.Max:
		return 0, true, &Error{Key: key, Value: raw, Detail: fmt.Sprintf("must be between %s and %s", k.Min, k.Max)}
	case d.Truncate(time.Second) != d:
		return 0, true, &Error{Key: key, Value: raw, Detail: "must be a whole number of seconds"}
	}
	return d, true, nil
}
