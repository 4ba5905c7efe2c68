package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// parser reads typed keys from one ConfigMap's data and remembers the
// first error, so each Parse function stays a flat list of keys.
type parser struct {
	cm   string
	data map[string]string
	err  error
}

func (p *parser) fail(key, value, want string) {
	if p.err == nil {
		p.err = fmt.Errorf("%s: %s=%q: %s", p.cm, key, value, want)
	}
}

func (p *parser) int64(key string, dst *int64, min, max int64) {
	v, ok := p.data[key]
	if !ok || strings.TrimSpace(v) == "" {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < min || n > max {
		p.fail(key, v, fmt.Sprintf("want an integer in [%d, %d]", min, max))
		return
	}
	*dst = n
}

func (p *parser) bool(key string, dst *bool) {
	v, ok := p.data[key]
	if !ok || strings.TrimSpace(v) == "" {
		return
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		p.fail(key, v, "want true or false")
		return
	}
	*dst = b
}

func (p *parser) string(key string, dst *string) {
	if v, ok := p.data[key]; ok && strings.TrimSpace(v) != "" {
		*dst = strings.TrimSpace(v)
	}
}

// list reads a comma-separated list, blanks dropped. A key that is
// present replaces the default, so an empty value means none.
func (p *parser) list(key string, dst *[]string) {
	v, ok := p.data[key]
	if !ok {
		return
	}
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	*dst = out
}

// durationOrDisabled reads a duration where Knative also accepts
// "disabled" (stored as -1).
func (p *parser) durationOrDisabled(key string, dst *time.Duration) {
	v, ok := p.data[key]
	if !ok || strings.TrimSpace(v) == "" {
		return
	}
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "disabled") {
		*dst = Disabled
		return
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		p.fail(key, v, `want a non-negative duration such as "48h", or "disabled"`)
		return
	}
	*dst = d
}

// int64OrDisabled reads a count where Knative also accepts "disabled".
func (p *parser) int64OrDisabled(key string, dst *int64) {
	if v, ok := p.data[key]; ok && strings.EqualFold(strings.TrimSpace(v), "disabled") {
		*dst = -1
		return
	}
	p.int64(key, dst, 0, 1<<31)
}

// Disabled marks a GC setting turned off.
const Disabled time.Duration = -1

// quantity reads a resource quantity (100m, 400Mi).
func (p *parser) quantity(key string, dst **resource.Quantity) {
	v, ok := p.data[key]
	if !ok || strings.TrimSpace(v) == "" {
		return
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(v))
	if err != nil {
		p.fail(key, v, "want a quantity such as 100m or 400Mi")
		return
	}
	*dst = &q
}

// enabled reads Knative's Enabled/Disabled switch (any case); def when
// the key is absent or blank.
func (p *parser) enabled(key string, def bool) bool {
	v, ok := p.data[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "enabled":
		return true
	case "disabled":
		return false
	}
	p.fail(key, v, "want Enabled or Disabled")
	return def
}
