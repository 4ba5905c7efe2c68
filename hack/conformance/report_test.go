package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var written = time.Date(2026, 11, 28, 10, 15, 0, 0, time.UTC)

// A run writes its own column's cells of the packages it ran, keeps the
// rest, and puts feature packages in their own table.
func TestWriteReportKeepsOtherModeAndPackages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conformance.md")
	// The cluster ran everything first.
	err := writeReport(path, "cluster", []string{"api/v1", "runtime", "e2e/pvc"}, []result{
		{suite: "api/v1", test: "TestRouteCreation", outcome: "PASS"},
		{suite: "runtime", test: "TestProbeRuntime", outcome: "PASS"},
		{suite: "runtime", test: "TestProbeRuntime/exec", outcome: "PASS"},
		{suite: "e2e/pvc", test: "TestPersistentVolumeClaims", outcome: "PASS"},
	}, written)
	if err != nil {
		t.Fatal(err)
	}
	// Then knit dev ran only the feature packages.
	err = writeReport(path, "dev", []string{"e2e/initcontainers", "e2e/pvc", "e2e/securedefaults"}, []result{
		{suite: "e2e/initcontainers", test: "TestInitContainers", outcome: "FAIL"},
		{suite: "e2e/pvc", test: "TestPersistentVolumeClaims", outcome: "FAIL"},
		{suite: "e2e/securedefaults", test: "TestSecureDefaults", outcome: "PASS"},
		{suite: "e2e/securedefaults", test: "TestUnsafePermitted", outcome: "SKIP"},
	}, written.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	doc := read(t, path)
	results, features := section(t, doc, "## Results"), section(t, doc, "## Knative e2e feature packages")
	for _, line := range []string{
		"| api/v1 | `TestRouteCreation` | — | pass |",
		"| runtime | `TestProbeRuntime/exec` | — | pass |",
	} {
		if !strings.Contains(results, line+"\n") {
			t.Errorf("conformance table lacks %q:\n%s", line, results)
		}
	}
	for _, line := range []string{
		"| e2e/initcontainers | `TestInitContainers` | **fail** | — |",
		"| e2e/pvc | `TestPersistentVolumeClaims` | **fail** | pass |",
		"| e2e/securedefaults | `TestSecureDefaults` | pass | — |",
		"| e2e/securedefaults | `TestUnsafePermitted` | skip | — |",
		"| knit dev | 1 | 2 | 1 | 0 |",
		"| cluster | 1 | 0 | 0 | 0 |",
		"- `e2e/initcontainers`: `kubernetes.podspec-init-containers`\n",
		"- `e2e/multicontainerprobing`: `multi-container-probing`\n",
		"- `e2e/pvc`: `kubernetes.podspec-persistent-volume-claim`, `kubernetes.podspec-persistent-volume-write` and `kubernetes.podspec-securitycontext`; Knative's test claim",
		"- `e2e/securedefaults`: `secure-pod-defaults`; with `--enable-alpha` too",
		"- `e2e`: none\n",
	} {
		if !strings.Contains(features, line) {
			t.Errorf("feature section lacks %q:\n%s", line, features)
		}
	}
	if strings.Contains(results, "e2e/") {
		t.Errorf("a feature package in the conformance table:\n%s", results)
	}
	// The conformance counts cover the conformance rows only.
	if !strings.Contains(doc, "| knit dev | 0 | 0 | 0 | 0 |\n| cluster | 3 | 0 | 0 | 0 |\n") {
		t.Errorf("conformance counts wrong:\n%s", doc)
	}
	header := strings.SplitN(doc, "\n\n", 3)[1]
	for _, want := range []string{
		"`test/conformance/api/v1`, `test/conformance/api/v1beta1` and `test/conformance/runtime`",
		"`test/e2e/initcontainers`, `test/e2e/multicontainerprobing`, `test/e2e/pvc`, `test/e2e/securedefaults`, `test/e2e/tagheader` and `test/e2e` (TestServiceToServiceCall, TestGradualRollout, TestRollbackBYOName, ",
		", TestRouteVisibilityChanges, TestSubrouteLocalSTS)",
		"Last written 2026-11-28 11:15 UTC by a run in knit dev of `e2e/initcontainers`, `e2e/pvc` and `e2e/securedefaults`.",
	} {
		if !strings.Contains(header, want) {
			t.Errorf("header lacks %q:\n%s", want, header)
		}
	}
}

// A test gone from a package's new run in both modes leaves the report;
// one gone from this mode only keeps its other cell.
func TestWriteReportDropsTestsNoRunHas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conformance.md")
	must(t, writeReport(path, "dev", []string{"runtime"}, []result{
		{suite: "runtime", test: "TestOld", outcome: "PASS"},
		{suite: "runtime", test: "TestBoth", outcome: "PASS"},
	}, written))
	must(t, writeReport(path, "cluster", []string{"runtime"}, []result{
		{suite: "runtime", test: "TestBoth", outcome: "FAIL"},
	}, written))
	must(t, writeReport(path, "dev", []string{"runtime"}, []result{
		{suite: "runtime", test: "TestBoth", outcome: "PASS"},
	}, written))
	doc := read(t, path)
	if strings.Contains(doc, "TestOld") {
		t.Errorf("TestOld kept:\n%s", doc)
	}
	if !strings.Contains(doc, "| runtime | `TestBoth` | pass | **fail** |\n") {
		t.Errorf("TestBoth:\n%s", doc)
	}
}

// The report reads back what it wrote, both tables.
func TestReadRowsRoundTrip(t *testing.T) {
	rows := map[string]*row{
		"api/v1 TestA":         {suite: "api/v1", test: "TestA", outcome: map[string]string{"dev": "PASS", "cluster": "FAIL"}},
		"e2e/pvc TestB":        {suite: "e2e/pvc", test: "TestB", outcome: map[string]string{"dev": "SKIP"}},
		"runtime TestC/sub-1x": {suite: "runtime", test: "TestC/sub-1x", outcome: map[string]string{"cluster": "PASS"}},
	}
	got := readRows(render(rows, "dev", []string{"api/v1"}, written))
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, want %d", len(got), len(rows))
	}
	for k, want := range rows {
		g := got[k]
		if g == nil || g.suite != want.suite || g.test != want.test || len(g.outcome) != len(want.outcome) {
			t.Errorf("%s: got %+v, want %+v", k, g, want)
			continue
		}
		for m, o := range want.outcome {
			if g.outcome[m] != o {
				t.Errorf("%s %s: got %s, want %s", k, m, g.outcome[m], o)
			}
		}
	}
}

func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, heading+"\n")
	if i < 0 {
		t.Fatalf("no %q in:\n%s", heading, doc)
	}
	rest := doc[i+len(heading)+1:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j+1]
	}
	return rest
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
