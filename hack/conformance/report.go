package main

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// modes are the report's columns, in order.
var modes = []string{"dev", "cluster"}

var modeTitles = map[string]string{"dev": "knit dev", "cluster": "cluster"}

// row is one test's line of the report: its outcome in each mode.
type row struct {
	suite, test string
	outcome     map[string]string
}

// writeReport rewrites path with this run's results: the cells of mode's
// column for the packages it ran. The other mode's column, and the
// packages this run left out, keep what the file had, as the run that
// wrote them found it. A test no run has a result for any more (one the
// release dropped) goes.
func writeReport(path, mode string, ran []string, results []result, now time.Time) error {
	rows := map[string]*row{}
	if old, err := os.ReadFile(path); err == nil {
		rows = readRows(old)
	}
	for k, r := range rows {
		if slices.Contains(ran, r.suite) {
			delete(r.outcome, mode)
		}
		if len(r.outcome) == 0 {
			delete(rows, k)
		}
	}
	for _, r := range results {
		key := r.suite + " " + r.test
		if rows[key] == nil {
			rows[key] = &row{suite: r.suite, test: r.test, outcome: map[string]string{}}
		}
		rows[key].outcome[mode] = r.outcome
	}
	return os.WriteFile(path, render(rows, mode, ran, now), 0o644)
}

// readRows reads the results table of a report this program wrote.
func readRows(doc []byte) map[string]*row {
	rows := map[string]*row{}
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		cells := strings.Split(strings.Trim(sc.Text(), "| "), " | ")
		if len(cells) != 2+len(modes) || !strings.HasPrefix(cells[1], "`Test") {
			continue
		}
		r := &row{suite: cells[0], test: strings.Trim(cells[1], "`"), outcome: map[string]string{}}
		for i, m := range modes {
			if o := outcomeOf(cells[2+i]); o != "" {
				r.outcome[m] = o
			}
		}
		rows[r.suite+" "+r.test] = r
	}
	return rows
}

var outcomeCells = map[string]string{"PASS": "pass", "FAIL": "**fail**", "SKIP": "skip"}

func outcomeOf(cell string) string {
	for o, c := range outcomeCells {
		if cell == c || strings.HasPrefix(cell, c+" ") {
			return o
		}
	}
	return ""
}

// render writes the report: the conformance packages' table, then the
// feature packages', each with its counts per mode. mode and ran say
// which run wrote it.
func render(rows map[string]*row, mode string, ran []string, now time.Time) []byte {
	var conf, feat []*row
	for _, k := range slices.Sorted(maps.Keys(rows)) {
		if isFeature(rows[k].suite) {
			feat = append(feat, rows[k])
		} else {
			conf = append(conf, rows[k])
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Knative Serving conformance\n\n")
	fmt.Fprintf(&b, "Knative Serving %s's own conformance suite (%s) and the e2e feature packages its CI runs with "+
		"config-features flags switched on (%s), test code unmodified, test images built from the same release, "+
		"run against knit by `make conformance` (knit dev) and `make conformance-cluster` (the test cluster, with the Helm chart). "+
		"Each feature package runs as Knative's CI runs it (`test/e2e-tests.sh`): its flags set to `Enabled` in knit's "+
		"`config-features` before it and the ConfigMap's previous data put back after it. "+
		"Both targets rewrite this file, each only its own column's cells of the packages it ran; "+
		"the other column, and packages a run left out, keep what their last run found. "+
		"Last written %s by a run in %s of %s.\n\n",
		release, packageList(conformancePackages), packageList(featurePackages),
		now.UTC().Format("2006-01-02 15:04 MST"), modeTitles[mode], codeList(ran))
	writeCounts(&b, conf)
	b.WriteString("\nSubtests are counted with their tests; a failing subtest fails its parent too.\n")
	for _, m := range modes {
		if len(exceptions[m]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## Exceptions of %s\n\n", modeTitles[m])
		for _, test := range slices.Sorted(maps.Keys(exceptions[m])) {
			fmt.Fprintf(&b, "- `%s`: %s\n", test, exceptions[m][test])
		}
	}
	b.WriteString("\n## Results\n\n")
	writeRows(&b, conf)
	b.WriteString("\n## Knative e2e feature packages\n\n")
	b.WriteString("Each package runs with these `config-features` flags `Enabled`, and the suite flags of the conformance packages:\n\n")
	for _, p := range featurePackages {
		flags := codeList(p.flags)
		if flags == "" {
			flags = "none"
		}
		fmt.Fprintf(&b, "- `%s`: %s", p.name, flags)
		if p.alpha {
			b.WriteString("; with `--enable-alpha` too (its tests skip without it)")
		}
		if p.claim {
			fmt.Fprintf(&b, "; Knative's test claim `%s` (`%s`) made first", claimName, claimFile)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	writeCounts(&b, feat)
	b.WriteString("\n")
	writeRows(&b, feat)
	b.WriteString(flagsSection)
	return b.Bytes()
}

// writeCounts writes each mode's counts of rows.
func writeCounts(b *bytes.Buffer, rows []*row) {
	fmt.Fprintf(b, "| mode | pass | fail | skip | failures that are documented exceptions |\n|---|---:|---:|---:|---:|\n")
	for _, m := range modes {
		var pass, fail, skip, excused int
		for _, r := range rows {
			switch r.outcome[m] {
			case "PASS":
				pass++
			case "FAIL":
				fail++
				if exceptionFor(exceptions[m], r.test) != "" {
					excused++
				}
			case "SKIP":
				skip++
			}
		}
		fmt.Fprintf(b, "| %s | %d | %d | %d | %d |\n", modeTitles[m], pass, fail, skip, excused)
	}
}

// writeRows writes the table of rows, a test a line, a mode a column;
// "—" where a mode has no result.
func writeRows(b *bytes.Buffer, rows []*row) {
	fmt.Fprintf(b, "| package | test | %s | %s |\n|---|---|---|---|\n", modeTitles[modes[0]], modeTitles[modes[1]])
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | `%s` |", r.suite, r.test)
		for _, m := range modes {
			cell := outcomeCells[r.outcome[m]]
			if cell == "" {
				cell = "—"
			}
			if r.outcome[m] == "FAIL" && exceptionFor(exceptions[m], r.test) != "" {
				cell += " (exception)"
			}
			fmt.Fprintf(b, " %s |", cell)
		}
		b.WriteString("\n")
	}
}

// packageList names packages by their directory in Knative's repository.
func packageList(pkgs []testPackage) string {
	var names []string
	for _, p := range pkgs {
		name := "`test/" + strings.TrimPrefix(p.importPath(), "knative.dev/serving/test/") + "`"
		if p.tests != "" {
			name += " (" + strings.NewReplacer("^(", "", ")$", "", "^", "", "$", "", "|", ", ").Replace(p.tests) + ")"
		}
		names = append(names, name)
	}
	return joinList(names)
}

// codeList is "`a`, `b` and `c`".
func codeList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = "`" + s + "`"
	}
	return joinList(quoted)
}

// joinList is "a, b and c".
func joinList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
