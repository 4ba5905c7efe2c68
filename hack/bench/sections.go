package main

import (
	"context"
	"fmt"
	"os"
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
		c, err := measureCluster(ctx, root, binDir, o.cluster, o.clusterRuns, os.Stderr)
		if err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		sections = append(sections, c.markdown())
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
	return out
}

// spliceTargets puts ts in place of the rows of the page's targets
// table that judge the same targets.
func spliceTargets(page string, ts []target) string {
	lines := strings.Split(page, "\n")
	for _, t := range ts {
		for i, l := range lines {
			if strings.HasPrefix(l, "| "+t.what+" |") {
				lines[i] = fmt.Sprintf("| %s | %s | %s |", t.what, t.measured, t.verdict)
			}
		}
	}
	return strings.Join(lines, "\n")
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
