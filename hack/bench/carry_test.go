package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCarriedCluster(t *testing.T) {
	const header = "# Benchmarks\n\n- Go: go1.26.8; commit 3f8a49a\n- Date: 2026-11-23 23:58 UTC\n\n## Request path\n\nrows\n"
	const cluster = "\n## On a real cluster\n\nThe single-node cluster.\n\n| run | pod |\n|---:|---:|\n| 1 | 600 ms |\n"
	const marked = "\n## On a real cluster\n\n" +
		"> Carried over from the run of 2026-11-23 23:58 UTC (commit 3f8a49a): this run skipped the cluster part\n" +
		"> (`BENCH_NO_CLUSTER` set, or not root on Linux), so these numbers are not from this page's run.\n\n" +
		"The single-node cluster.\n\n| run | pod |\n|---:|---:|\n| 1 | 600 ms |\n"
	tests := []struct {
		name, old, want string
	}{
		{"no cluster section", header + "\n## Targets (an older heading)\n\n| a |\n", ""},
		{"between sections", header + cluster + "\n## Targets (an older heading)\n\n| a |\n", marked},
		{"last section", header + cluster, marked},
		{"carried twice keeps the first mark", "# Benchmarks\n\n- Date: 2026-12-01 10:00 UTC\n" + marked + "\n## Targets\n", marked},
		{"no date or commit", "# Benchmarks\n" + cluster,
			"\n## On a real cluster\n\n" +
				"> Carried over from an earlier run: this run skipped the cluster part\n" +
				"> (`BENCH_NO_CLUSTER` set, or not root on Linux), so these numbers are not from this page's run.\n\n" +
				"The single-node cluster.\n\n| run | pod |\n|---:|---:|\n| 1 | 600 ms |\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, carriedCluster(tt.old)); diff != "" {
				t.Errorf("carriedCluster (-want +got):\n%s", diff)
			}
		})
	}
}
