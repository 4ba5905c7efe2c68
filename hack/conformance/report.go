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

// writeReport rewrites path with this run's results in mode's column,
// keeping the other mode's column from the file as it was.
func writeReport(path, mode string, results []result) error {
	rows := map[string]*row{}
	if old, err := os.ReadFile(path); err == nil {
		rows = readRows(old)
	}
	for _, r := range rows {
		delete(r.outcome, mode)
	}
	for _, r := range results {
		key := r.suite + " " + r.test
		if rows[key] == nil {
			rows[key] = &row{suite: r.suite, test: r.test, outcome: map[string]string{}}
		}
		rows[key].outcome[mode] = r.outcome
	}
	return os.WriteFile(path, render(rows), 0o644)
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

func render(rows map[string]*row) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Knative Serving conformance\n\n")
	fmt.Fprintf(&b, "Knative Serving %s's own conformance suite (`test/conformance/api/v1` and `test/conformance/runtime`, "+
		"test code unmodified, test images built from the same release) run against knit by `make conformance` "+
		"(knit dev) and `make conformance-cluster` (the test cluster, with the Helm chart). Both rewrite this file; "+
		"each keeps the other's column. Last written %s.\n\n", release, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "| mode | pass | fail | skip | failures that are documented exceptions |\n|---|---:|---:|---:|---:|\n")
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
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", modeTitles[m], pass, fail, skip, excused)
	}
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
	fmt.Fprintf(&b, "\n## Results\n\n| package | test | %s | %s |\n|---|---|---|---|\n", modeTitles[modes[0]], modeTitles[modes[1]])
	keys := slices.Sorted(maps.Keys(rows))
	for _, k := range keys {
		r := rows[k]
		fmt.Fprintf(&b, "| %s | `%s` |", r.suite, r.test)
		for _, m := range modes {
			cell := outcomeCells[r.outcome[m]]
			if cell == "" {
				cell = "—"
			}
			if r.outcome[m] == "FAIL" && exceptionFor(exceptions[m], r.test) != "" {
				cell += " (exception)"
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}
