package build

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// containerPaths are where the objects knit applies from Git keep their
// containers: a Service's or Configuration's template, a Revision's spec.
var containerPaths = [][]string{
	{"spec", "template", "spec", "containers"},
	{"spec", "template", "spec", "initContainers"},
	{"spec", "containers"},
	{"spec", "initContainers"},
}

// SourceImages are the distinct images an object runs that knit builds
// from source (IsSource), in order.
func SourceImages(obj *unstructured.Unstructured) []string {
	var out []string
	seen := map[string]bool{}
	eachImage(obj, func(image string) string {
		if IsSource(image) && !seen[image] {
			seen[image] = true
			out = append(out, image)
		}
		return image
	})
	return out
}

// Rewrite replaces each source image of obj by what built maps it to;
// images built does not name stay as they are.
func Rewrite(obj *unstructured.Unstructured, built map[string]string) {
	eachImage(obj, func(image string) string {
		if ref, ok := built[image]; ok {
			return ref
		}
		return image
	})
}

// eachImage calls f with every container image of obj and stores what it
// returns.
func eachImage(obj *unstructured.Unstructured, f func(string) string) {
	for _, p := range containerPaths {
		containers, ok, err := unstructured.NestedSlice(obj.Object, p...)
		if !ok || err != nil {
			continue
		}
		changed := false
		for _, c := range containers {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			image, _ := m["image"].(string)
			if next := f(image); next != image {
				m["image"], changed = next, true
			}
		}
		if changed {
			_ = unstructured.SetNestedSlice(obj.Object, containers, p...) // the path exists: it was just read
		}
	}
}
