package autoscaler

import "time"

// annotationReader parses annotations and collects a FieldError per bad value,
// so one NewSpec call reports every mistake at once.
type annotationReader struct {
	annotations map[string]string
	errs        []error
}

func (r *annotationReader) has(key string) (used, raw string, ok bool) {
	return lookupAnnotation(r.annotations, key)
}

func (r *annotationReader) require(ok bool, used, raw, reason string) {
	if !ok {
		r.errs = append(r.errs, &FieldError{Source: SourceAnnotation, Key: used, Value: raw, Reason: reason})
	}
}

// float returns the annotation's value, or def when it is absent or bad.
func (r *annotationReader) float(key string, def float64, valid func(float64) bool, reason string) (float64, bool) {
	used, raw, ok := r.has(key)
	if !ok {
		return def, false
	}
	v, bad := parseFloat(raw)
	if bad == "" && !valid(v) {
		bad = reason
	}
	if bad != "" {
		r.require(false, used, raw, bad)
		return def, false
	}
	return v, true
}

// int32 returns the annotation's value, or def when it is absent or bad.
func (r *annotationReader) int32(key string, def, least int32, reason string) (int32, bool) {
	used, raw, ok := r.has(key)
	if !ok {
		return def, false
	}
	v, bad := parseInt32(raw)
	if bad == "" && v < least {
		bad = reason
	}
	if bad != "" {
		r.require(false, used, raw, bad)
		return def, false
	}
	return v, true
}

// duration returns the annotation's value, or def when it is absent or bad;
// like Knative it must lie in [least, most] and, where the KPA counts it in
// buckets or ticks, be whole seconds.
func (r *annotationReader) duration(key string, def, least, most time.Duration, wholeSeconds bool) (time.Duration, bool) {
	used, raw, ok := r.has(key)
	if !ok {
		return def, false
	}
	v, bad := parseDuration(raw)
	switch {
	case bad != "":
		r.require(false, used, raw, bad)
	case v < least || v > most:
		r.require(false, used, raw, "must be in ["+least.String()+", "+most.String()+"]")
	case wholeSeconds && v.Truncate(time.Second) != v:
		r.require(false, used, raw, "must be whole seconds")
	default:
		return v, true
	}
	return def, false
}

func atLeast(least float64) func(float64) bool {
	return func(v float64) bool { return v >= least }
}

func within(least, most float64) func(float64) bool {
	return func(v float64) bool { return v >= least && v <= most }
}
