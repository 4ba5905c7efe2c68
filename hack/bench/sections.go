package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// runSections is a run without the request-path part (-only without
// request): each part it runs writes its own section into the page at
// o.out in place of the last one, the rest of the page kept as it is.
func runSections(ctx context.Context, o options, root, binDir string, began time.Time) error {
	m := readMachine(root)
	var sections []string
	// ran holds the parts' results whose targets the page's table
	// judges, so that their rows are judged again rather than left as
	// the last whole run judged them.
	var ran report
	if o.runs(partEdge) {
		e, err := measureEdge(ctx, root, o, os.Stderr)
		if err != nil {
			return fmt.Errorf("edge: %w", err)
		}
		e.machine = m
		sections = append(sections, e.markdown())
	}
	if o.coldRuns > 0 && o.runs(partCold) {
		c, err := measureColdStart(ctx, root, binDir, o.coldRuns, os.Stderr)
		if err != nil {
			return fmt.Errorf("cold start: %w", err)
		}
		sections = append(sections, c.markdown())
		ran.cold = c
	}
	if o.dockerfileRuns > 0 && o.runs(partDockerfile) {
		d, err := measureDockerfile(ctx, root, binDir, o.dockerfileRuns, os.Stderr)
		if err != nil {
			return fmt.Errorf("dockerfile: %w", err)
		}
		sections = append(sections, d.markdown())
		ran.dockerfile = d
	}
	if o.pullRuns > 0 && o.runs(partPull) {
		p, err := measurePull(ctx, o.pullRuns, os.Stderr)
		if err != nil {
			return fmt.Errorf("pull: %w", err)
		}
		sections = append(sections, p.markdown())
	}
	if o.cluster != "" && o.runs(partCluster) {
		c, err := measureCluster(ctx, root, binDir, o.cluster, o.clusterRuns, o.clusterDockerfileRuns, os.Stderr)
		if err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		sections = append(sections, c.markdown())
		ran.cluster = c
	}
	for _, s := range sections {
		fmt.Print(s)
	}
	if o.out == "" {
		return nil
	}
	old, err := os.ReadFile(o.out)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	page := string(old)
	for _, s := range sections {
		page = spliceSection(page, s)
	}
	page = afterRequestPath(page, edgeHeading)
	page = spliceTargets(page, ran.partTargets())
	if err := os.WriteFile(o.out, []byte(page), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %d section(s) of %s in %s\n", len(sections), o.out, time.Since(began).Round(time.Second))
	return nil
}

// partTargets are the targets judged by the parts a partial run ran.
func (r *report) partTargets() []target {
	var out []target
	if r.cold != nil {
		out = append(out, r.coldTarget(), r.imageColdTarget())
	}
	if r.dockerfile != nil {
		out = append(out, r.dockerfileTarget())
	}
	if r.cluster != nil {
		out = append(out, r.replicaTarget(), r.clusterDockerfileTarget())
	}
	return out
}

// spliceTargets puts ts in place of the rows of the page's targets
// table that judge the same targets; a target the table has no row for
// (one added since the page's last whole run) gets one at its end.
func spliceTargets(page string, ts []target) string {
	lines := strings.Split(page, "\n")
	var missing []string
	for _, t := range ts {
		row, found := fmt.Sprintf("| %s | %s | %s |", t.what, t.measured, t.verdict), false
		for i, l := range lines {
			if strings.HasPrefix(l, "| "+t.what+" |") {
				lines[i], found = row, true
			}
		}
		if !found {
			missing = append(missing, row)
		}
	}
	if end := targetsTableEnd(lines); end >= 0 && len(missing) > 0 {
		lines = slices.Insert(lines, end, missing...)
	}
	return strings.Join(lines, "\n")
}

// targetsTableEnd is the index of the line after the targets table's
// last row, -1 when the page has no targets table.
func targetsTableEnd(lines []string) int {
	at := slices.Index(lines, "## Targets")
	if at < 0 {
		return -1
	}
	for i := at + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "## ") {
			return -1
		}
		if !strings.HasPrefix(lines[i], "| target |") {
			continue
		}
		for i < len(lines) && strings.HasPrefix(lines[i], "|") {
			i++
		}
		return i
	}
	return -1
}

// afterRequestPath moves the section under heading, if the page has
// one, to where a whole run writes it: after the request-path part,
// before the cold-start section. spliceSection put a new one before the
// targets.
func afterRequestPath(page, heading string) string {
	section := carriedSection(page, heading)
	at := strings.Index(page, "\n"+coldHeading+"\n")
	if section == "" || at < 0 || strings.Index(page, "\n"+heading+"\n") < at {
		return page
	}
	page = strings.Replace(page, section, "", 1)
	at = strings.Index(page, "\n"+coldHeading+"\n")
	return page[:at] + section + page[at:]
}

// coldHeading opens the cold-start section.
const coldHeading = "## Cold start"

// carriedSection is the section of old under heading (a "## " line),
// up to the next "## " heading, or "" when old has none.
func carriedSection(old, heading string) string {
	start := strings.Index(old, "\n"+heading+"\n")
	if start < 0 {
		return ""
	}
	rest := old[start+1+len(heading)+1:]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end+1]
	}
	return strings.TrimRight("\n"+heading+"\n"+rest, "\n") + "\n"
}
