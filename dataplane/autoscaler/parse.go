package autoscaler

import (
	"math"
	"strconv"
	"time"
)

// The parsers below return a reason, not an error, so that config and
// annotations can wrap it into a FieldError naming their own source and key.

func parseFloat(raw string) (float64, string) {
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "not a number"
	}
	return v, ""
}

func parseInt32(raw string) (int32, string) {
	v, err := strconv.ParseInt(raw, 10, 32)
	if err != nil {
		return 0, "not a 32-bit integer"
	}
	return int32(v), ""
}

func parseBool(raw string) (bool, string) {
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return false, "not a boolean (true or false)"
	}
	return v, ""
}

func parseDuration(raw string) (time.Duration, string) {
	v, err := time.ParseDuration(raw)
	if err != nil {
		return 0, "not a duration (like 30s or 1m)"
	}
	return v, ""
}
