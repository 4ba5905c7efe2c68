package webhooks

import (
	"reflect"
	"slices"
	"strings"
)

// jsonName returns a struct field's JSON name and whether it is inlined
// (embedded without a name, or tagged ",inline").
func jsonName(f reflect.StructField) (name string, inline bool) {
	name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
	return name, name == "" && (f.Anonymous || strings.Contains(f.Tag.Get("json"), "inline"))
}

// disallowedFields lists, by JSON name and in declaration order, the
// fields set on struct v that are not in allowed. It is Knative's
// CheckDisallowedFields: a field Kubernetes adds later is refused until
// knit chooses to allow it.
func disallowedFields(v any, allowed ...string) []string {
	rv := reflect.ValueOf(v)
	var set []string
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		name, inline := jsonName(f)
		if !f.IsExported() || inline || name == "-" || slices.Contains(allowed, name) {
			continue
		}
		if !rv.Field(i).IsZero() {
			set = append(set, name)
		}
	}
	return set
}
