package main

import (
	"slices"
	"strings"
	"testing"
)

func TestResolvePackages(t *testing.T) {
	names := func(pkgs []testPackage) string {
		var out []string
		for _, p := range pkgs {
			out = append(out, p.name)
		}
		return strings.Join(out, ",")
	}
	for spec, want := range map[string]string{
		defaultSuites:                      "api/v1,api/v1beta1,runtime,e2e/initcontainers,e2e/multicontainerprobing,e2e/pvc,e2e/securedefaults,e2e/tagheader,e2e",
		"features":                         "e2e/initcontainers,e2e/multicontainerprobing,e2e/pvc,e2e/securedefaults,e2e/tagheader,e2e",
		"conformance":                      "api/v1,api/v1beta1,runtime",
		"e2e/pvc,runtime":                  "runtime,e2e/pvc",
		"features, e2e/pvc,api/v1,api/v1,": "api/v1,e2e/initcontainers,e2e/multicontainerprobing,e2e/pvc,e2e/securedefaults,e2e/tagheader,e2e",
	} {
		got, err := resolvePackages(spec)
		if err != nil {
			t.Errorf("%q: %v", spec, err)
			continue
		}
		if names(got) != want {
			t.Errorf("%q: got %s, want %s", spec, names(got), want)
		}
	}
	for _, bad := range []string{"", "e2e/autoscale", "api"} {
		if _, err := resolvePackages(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestImportPaths(t *testing.T) {
	pkgs, _ := resolvePackages(defaultSuites)
	var got []string
	for _, p := range pkgs {
		got = append(got, p.importPath())
	}
	want := []string{
		"knative.dev/serving/test/conformance/api/v1",
		"knative.dev/serving/test/conformance/api/v1beta1",
		"knative.dev/serving/test/conformance/runtime",
		"knative.dev/serving/test/e2e/initcontainers",
		"knative.dev/serving/test/e2e/multicontainerprobing",
		"knative.dev/serving/test/e2e/pvc",
		"knative.dev/serving/test/e2e/securedefaults",
		"knative.dev/serving/test/e2e/tagheader",
		"knative.dev/serving/test/e2e",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParseResults(t *testing.T) {
	out := `=== RUN   TestA
=== RUN   TestSlow
=== RUN   TestSlow/sub
--- PASS: TestA (1.50s)
    --- SKIP: TestB/x (0.00s)
panic: test timed out after 2m0s
	running tests:
		TestSlow (2m0s)
		TestSlow/sub (1m59s)

goroutine 17 [running]:
	TestNotATest (1s)
`
	got := parseResults("e2e/pvc", strings.NewReader(out))
	want := []result{
		{suite: "e2e/pvc", test: "TestA", outcome: "PASS", elapsed: 1500_000_000},
		{suite: "e2e/pvc", test: "TestB/x", outcome: "SKIP"},
		{suite: "e2e/pvc", test: "TestSlow", outcome: "FAIL"},
		{suite: "e2e/pvc", test: "TestSlow/sub", outcome: "FAIL"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
