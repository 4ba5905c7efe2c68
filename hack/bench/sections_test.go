package main

import (
	"strings"
	"testing"
	"time"
)

func TestCarriedSectionAndPlacement(t *testing.T) {
	page := "# Benchmarks\n\n## Request path\n\nrows\n\n## Cold start\n\ncold\n\n## The edge: knit's ingress beside nginx\n\nedge rows\n\n## Targets\n\nt\n"
	tests := []struct {
		name, page, heading, want string
	}{
		{"a middle section", page, edgeHeading, "\n## The edge: knit's ingress beside nginx\n\nedge rows\n"},
		{"the last section", page, "## Targets", "\n## Targets\n\nt\n"},
		{"none", page, "## Nope", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := carriedSection(tt.page, tt.heading); got != tt.want {
				t.Errorf("carriedSection = %q, want %q", got, tt.want)
			}
		})
	}
	want := "# Benchmarks\n\n## Request path\n\nrows\n\n## The edge: knit's ingress beside nginx\n\nedge rows\n\n## Cold start\n\ncold\n\n## Targets\n\nt\n"
	if got := afterRequestPath(page, edgeHeading); got != want {
		t.Errorf("afterRequestPath =\n%s\nwant\n%s", got, want)
	}
	if got := afterRequestPath(want, edgeHeading); got != want {
		t.Errorf("afterRequestPath of a page in order changed it:\n%s", got)
	}
}

func TestSpliceTargetsJudgesThePartsThatRanAgain(t *testing.T) {
	page := "## Targets\n\n| target | measured | verdict |\n|---|---|---|\n" +
		"| cold start < 50.0 ms beyond the app's own start (medians) | 53.4 ms − 5.9 ms = 47.4 ms | target met |\n" +
		"| an image Revision's cold start < 100.0 ms beyond the app's own start (runc over an overlay snapshot; medians) | 123.4 ms − 5.5 ms = 117.9 ms | **target not met** |\n" +
		"| knit-queue RSS per replica < 4.0 MiB, idle | 8.0 MiB | **target not met** |\n"
	r := report{cold: &coldResult{
		runs:  []coldRun{{app: 6 * time.Millisecond, ttfb: 80 * time.Millisecond}},
		image: []coldRun{{app: 5 * time.Millisecond, ttfb: 95 * time.Millisecond}},
	}}
	got := spliceTargets(page, r.partTargets())
	for _, want := range []string{
		"| cold start < 50.0 ms beyond the app's own start (medians) | 80.0 ms − 6.0 ms = 74.0 ms | **target not met** |\n",
		"| an image Revision's cold start < 100.0 ms beyond the app's own start (runc over an overlay snapshot; medians) | 95.0 ms − 5.0 ms = 90.0 ms | target met |\n",
		"| knit-queue RSS per replica < 4.0 MiB, idle | 8.0 MiB | **target not met** |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q:\n%s", want, got)
		}
	}
	if spliceTargets(page, (&report{}).partTargets()) != page {
		t.Error("a run of no judged part changed the targets")
	}
}

// A partial cluster run judges the cluster's rows again and adds the one
// a page written before that target existed lacks, at the table's end.
func TestSpliceTargetsAddsAMissingRow(t *testing.T) {
	replica := "| the same as the kubelet counts it on the cluster: queue-proxy container's working set < 4.0 MiB, each replica |  | not measured |"
	page := "## Targets\n\n| target | measured | verdict |\n|---|---|---|\n" +
		"| cold start < 50.0 ms beyond the app's own start (medians) | 53.4 ms − 5.9 ms = 47.4 ms | target met |\n" +
		replica + "\n"
	r := report{cluster: &clusterResult{dockerfile: &clusterDockerfileResult{runs: []clusterDockerfileRun{
		{total: 30 * time.Second, job: 25 * time.Second, build: 20 * time.Second},
		{cached: true, total: 6 * time.Second, job: 4 * time.Second, build: 2 * time.Second},
	}}}}
	got := spliceTargets(page, r.partTargets())
	want := "## Targets\n\n| target | measured | verdict |\n|---|---|---|\n" +
		"| cold start < 50.0 ms beyond the app's own start (medians) | 53.4 ms − 5.9 ms = 47.4 ms | target met |\n" +
		replica + "\n" +
		"| " + r.clusterDockerfileTarget().what + " | 6.00 s (Job 4.00 s, of it build 2.00 s; rest 2.00 s) | target met |\n"
	if got != want {
		t.Errorf("spliceTargets =\n%s\nwant\n%s", got, want)
	}
	if again := spliceTargets(got, r.partTargets()); again != got {
		t.Errorf("a second splice changed the page:\n%s", again)
	}
	if noTable := "## Cold start\n\ncold\n"; spliceTargets(noTable, r.partTargets()) != noTable {
		t.Error("a page without a targets table got rows")
	}
}
