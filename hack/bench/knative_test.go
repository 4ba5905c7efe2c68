package main

import (
	"os"
	"regexp"
	"testing"
)

// The report names the Knative release hack/knative builds; the two must
// move together.
func TestKnativeVersionIsTheOneBuilt(t *testing.T) {
	gomod, err := os.ReadFile("../knative/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	required := regexp.MustCompile(`(?m)^\s*(require\s+)?knative\.dev/serving ` + regexp.QuoteMeta(knativeVersion) + `(\s|$)`)
	if !required.Match(gomod) {
		t.Errorf("hack/knative/go.mod does not require knative.dev/serving %s: bump knativeVersion with it", knativeVersion)
	}
}
