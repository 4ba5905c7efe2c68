package main

import (
	"fmt"
	"strings"
)

// clusterHeading opens the cluster section of the report.
const clusterHeading = "## On a real cluster\n"

// carriedNote starts the line a carried-over cluster section is marked
// with.
const carriedNote = "> Carried over from"

// carriedCluster returns the cluster section of a previous report, for a
// run that skipped the cluster part (BENCH_NO_CLUSTER, or not root): a
// cluster measurement takes minutes and a machine others share, so it is
// kept until the next run that makes one rather than dropped. The section
// is marked with the date and commit of the run that measured it; one
// carried over before keeps its mark. It is "" when old has no such
// section.
func carriedCluster(old string) string {
	start := strings.Index(old, "\n"+clusterHeading)
	if start < 0 {
		return ""
	}
	section := old[start:] // from the newline before the heading
	if end := strings.Index(section[1+len(clusterHeading):], "\n## "); end >= 0 {
		section = section[:1+len(clusterHeading)+end+1]
	}
	section = strings.TrimRight(section, "\n") + "\n"
	if strings.Contains(section, carriedNote) {
		return section
	}
	from, commit := "an earlier run", ""
	for _, line := range strings.Split(old[:start], "\n") {
		if v, ok := strings.CutPrefix(line, "- Date: "); ok {
			from = "the run of " + v
		}
		if _, v, ok := strings.Cut(line, "; commit "); ok && strings.HasPrefix(line, "- Go: ") {
			commit = " (commit " + v + ")"
		}
	}
	note := fmt.Sprintf("%s %s%s: this run skipped the cluster part\n"+
		"> (`BENCH_NO_CLUSTER` set, or not root on Linux), so these numbers are not from this page's run.\n\n", carriedNote, from, commit)
	return strings.Replace(section, clusterHeading+"\n", clusterHeading+"\n"+note, 1)
}
