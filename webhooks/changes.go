package webhooks

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// change is one field that differs between two versions of an object,
// with both values as JSON ("<none>" when absent).
type change struct {
	path     *field.Path
	old, new string
}

func (c change) String() string {
	return fmt.Sprintf("%s: -%s +%s", c.path, c.old, c.new)
}

// changes lists the leaf fields that differ between old and new, named by
// their JSON paths under path, so an error can say which field changed
// rather than that something did. Equality is equality.Semantic's.
func changes(path *field.Path, old, new any) []change {
	var out []change
	walk(path, reflect.ValueOf(old), reflect.ValueOf(new), &out)
	return out
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

func walk(p *field.Path, a, b reflect.Value, out *[]change) {
	if a.IsValid() && b.IsValid() && equality.Semantic.DeepEqual(a.Interface(), b.Interface()) {
		return
	}
	if !a.IsValid() || !b.IsValid() {
		*out = append(*out, change{p, render(a), render(b)})
		return
	}
	switch t := a.Type(); {
	case a.Kind() == reflect.Pointer && !a.IsNil() && !b.IsNil():
		walk(p, a.Elem(), b.Elem(), out)
	case a.Kind() == reflect.Struct && !t.Implements(marshalerType) && !reflect.PointerTo(t).Implements(marshalerType):
		for i := range t.NumField() {
			f := t.Field(i)
			name, inline := jsonName(f)
			if !f.IsExported() || name == "-" {
				continue
			}
			fp := p
			if !inline {
				fp = p.Child(name)
			}
			walk(fp, a.Field(i), b.Field(i), out)
		}
	case a.Kind() == reflect.Slice:
		for i := range max(a.Len(), b.Len()) {
			walk(p.Index(i), index(a, i), index(b, i), out)
		}
	case a.Kind() == reflect.Map:
		keys := append(a.MapKeys(), b.MapKeys()...)
		slices.SortFunc(keys, func(x, y reflect.Value) int { return cmp.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
		keys = slices.CompactFunc(keys, func(x, y reflect.Value) bool { return fmt.Sprint(x) == fmt.Sprint(y) })
		for _, k := range keys {
			walk(p.Key(fmt.Sprint(k)), a.MapIndex(k), b.MapIndex(k), out)
		}
	default:
		*out = append(*out, change{p, render(a), render(b)})
	}
}

// index is v[i], or the invalid Value past the end.
func index(v reflect.Value, i int) reflect.Value {
	if i < v.Len() {
		return v.Index(i)
	}
	return reflect.Value{}
}

func render(v reflect.Value) string {
	if !v.IsValid() || (v.Kind() == reflect.Pointer || v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.IsNil() {
		return "<none>"
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Sprint(v.Interface())
	}
	return string(b)
}
