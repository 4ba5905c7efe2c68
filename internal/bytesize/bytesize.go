// Package bytesize reads and writes the byte sizes of knit's limits as a
// person does: "100MiB" in a flag, "100 MiB" in the message of a refusal.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// units are the binary suffixes Parse accepts (with or without a final
// "B", in any case) and Format writes, largest first.
var units = []struct {
	suffix string
	size   int64
}{
	{"Ti", 1 << 40},
	{"Gi", 1 << 30},
	{"Mi", 1 << 20},
	{"Ki", 1 << 10},
}

// Format writes n with the largest binary unit it is a whole or tenth
// multiple of, e.g. "100 MiB", "1.5 GiB", "300 bytes".
func Format(n int64) string {
	for _, u := range units {
		if n >= u.size && (n*10)%u.size == 0 {
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', -1, 64) + " " + u.suffix + "B"
		}
	}
	if n == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Parse reads a size: a whole number of bytes ("1048576") or a number
// with a binary unit ("100MiB", "100Mi", "1.5GiB", "512kib"), as
// Kubernetes' quantities spell them.
func Parse(s string) (int64, error) {
	num, mult := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "b"), int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(num, strings.ToLower(u.suffix)); ok {
			num, mult = strings.TrimSpace(rest), u.size
			break
		}
	}
	if !decimal(num) {
		return 0, fmt.Errorf("size %q: want a number of bytes, or of KiB, MiB, GiB or TiB", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	if v := f * float64(mult); v < 1<<62 {
		return int64(v), nil
	}
	return 0, fmt.Errorf("size %q is too large", s)
}

// decimal reports whether s is digits with at most one decimal point.
func decimal(s string) bool {
	digits, points := 0, 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}

// Value is a flag.Value holding a size in bytes.
type Value struct{ p *int64 }

// NewValue makes a Value that sets *p, starting at def.
func NewValue(p *int64, def int64) Value {
	*p = def
	return Value{p}
}

// String writes the size as Format does; flag shows it as the default.
func (v Value) String() string {
	if v.p == nil {
		return ""
	}
	return Format(*v.p)
}

// Set parses s (Parse).
func (v Value) Set(s string) error {
	n, err := Parse(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}
