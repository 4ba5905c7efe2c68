package podlogs

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// options are the query parameters of /containerLogs, corev1.PodLogOptions
// as the API server encodes them for the kubelet.
type options struct {
	follow, previous, timestamps bool
	tailLines                    int64 // < 0: all
	limitBytes                   int64 // <= 0: no limit
	since                        time.Time
}

func parseOptions(q url.Values) (options, error) {
	o := options{tailLines: -1}
	var err error
	for _, b := range []struct {
		name string
		to   *bool
	}{{"follow", &o.follow}, {"previous", &o.previous}, {"timestamps", &o.timestamps}} {
		if *b.to, err = boolParam(q, b.name); err != nil {
			return o, err
		}
	}
	if o.tailLines, err = intParam(q, "tailLines", -1); err != nil {
		return o, err
	}
	if o.limitBytes, err = intParam(q, "limitBytes", 0); err != nil {
		return o, err
	}
	o.since, err = sinceParam(q, time.Now())
	return o, err
}

func boolParam(q url.Values, name string) (bool, error) {
	v := q.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q is not a boolean", name, v)
	}
	return b, nil
}

func intParam(q url.Values, name string, unset int64) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return unset, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q is not a non-negative integer", name, v)
	}
	return n, nil
}

// sinceParam is the earliest time a line may have: sinceTime, or now less
// sinceSeconds; the zero time when neither is set.
func sinceParam(q url.Values, now time.Time) (time.Time, error) {
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("sinceTime=%q is not an RFC 3339 time", v)
		}
		return t, nil
	}
	secs, err := intParam(q, "sinceSeconds", 0)
	if err != nil || secs == 0 {
		return time.Time{}, err
	}
	return now.Add(-time.Duration(secs) * time.Second), nil
}
