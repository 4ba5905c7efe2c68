package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseClusterDurations(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		in                 string
		fetch, build, push time.Duration
		err                string
	}{
		{in: "fetch=0.11s build=1.76s push=0.23s", fetch: 110 * ms, build: 1760 * ms, push: 230 * ms},
		{in: "push=0.2s build=3s fetch=0.1s", fetch: 100 * ms, build: 3 * time.Second, push: 200 * ms},
		{in: "build=1m2.5s", build: 62500 * ms},
		{in: "fetch=0.4s build=2s reused", fetch: 400 * ms, build: 2 * time.Second},
		// A ko:// build's record and a reused key's are not a BuildKit build.
		{in: "fetch=0.4s compile=3.1s push=0.2s", err: "no build="},
		{in: "fetch=0.1s reused", err: "no build="},
		{in: "", err: "no build="},
		{in: "fetch=soon build=1s", err: `fetch="soon" is not a duration`},
		{in: "build=-1s", err: `build="-1s" is not a duration`},
	} {
		fetch, build, push, err := parseClusterDurations(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseClusterDurations(%q) = %v, %v, %v, %v; want an error with %q", tc.in, fetch, build, push, err, tc.err)
			}
		case err != nil || fetch != tc.fetch || build != tc.build || push != tc.push:
			t.Errorf("parseClusterDurations(%q) = %v, %v, %v, %v; want %v, %v, %v", tc.in, fetch, build, push, err, tc.fetch, tc.build, tc.push)
		}
	}
}

func TestClusterDockerfileMarkdown(t *testing.T) {
	ms := time.Millisecond
	cold := clusterDockerfileRun{total: 40 * time.Second, job: 35 * time.Second, fetch: 100 * ms, build: 30 * time.Second, push: 2 * time.Second}
	measured := &clusterDockerfileResult{
		basePush: 1200 * ms,
		runs: []clusterDockerfileRun{
			cold,
			{cached: true, total: 7000 * ms, job: 4000 * ms, fetch: 100 * ms, build: 1500 * ms, push: 300 * ms},
			{cached: true, total: 6000 * ms, job: 4500 * ms, fetch: 200 * ms, build: 1700 * ms, push: 200 * ms},
			{cached: true, total: 9000 * ms, job: 3500 * ms, fetch: 150 * ms, build: 1600 * ms, push: 250 * ms},
		},
	}
	slow := &clusterDockerfileResult{claimKept: true, runs: []clusterDockerfileRun{
		{cached: true, total: 12 * time.Second, job: 8 * time.Second, build: 5 * time.Second},
		{cached: true, total: 9 * time.Second, job: 6 * time.Second, build: 3 * time.Second},
	}}
	for _, tc := range []struct {
		name    string
		res     *clusterDockerfileResult
		want    []string
		notWant []string
		target  target
	}{
		{
			name: "measured",
			res:  measured,
			want: []string{
				"\n### Push code → serving: dockerfile:// built in the cluster\n\n",
				"(pushed in 1.2s)",
				"The cache claim was new, so run 1 starts with an empty BuildKit cache.\n",
				"| 1 | cold | 40.00 s | 35.00 s | 0.10 s | 30.00 s | 2.00 s | 5.00 s |\n",
				"| 2 | warm | 7.00 s | 4.00 s | 0.10 s | 1.50 s | 0.30 s | 3.00 s |\n",
				"| 3 | warm | 6.00 s | 4.50 s | 0.20 s | 1.70 s | 0.20 s | 1.50 s |\n",
				"| 4 | warm | 9.00 s | 3.50 s | 0.15 s | 1.60 s | 0.25 s | 5.50 s |\n",
				// Run 1 out, each median on its own: rest's is 3.00 s, not 7.00 − 4.00.
				"| **median, warm** | | **7.00 s** | **4.00 s** | **0.15 s** | **1.60 s** | **0.25 s** | **3.00 s** |\n",
			},
			target: target{measured: "7.00 s (Job 4.00 s, of it build 1.60 s; rest 3.00 s)", verdict: "target met"},
		},
		{
			name: "slow, the claim kept",
			res:  slow,
			want: []string{
				"The cache claim was kept from an earlier run, so run 1 may start warm.\n",
				"| 1 | warm | 12.00 s |",
				"| **median, warm** | | **9.00 s** |",
			},
			target: target{measured: "9.00 s (Job 6.00 s, of it build 3.00 s; rest 3.00 s)", verdict: "**target not met**"},
		},
		{
			name:    "the first push alone",
			res:     &clusterDockerfileResult{runs: []clusterDockerfileRun{cold}},
			want:    []string{"| 1 | cold | 40.00 s |"},
			notWant: []string{"**median"},
			target:  target{verdict: "not measured"},
		},
		{
			name:    "no base image",
			res:     &clusterDockerfileResult{skipped: "base image python is not built"},
			want:    []string{"### Push code → serving: dockerfile:// built in the cluster\n\nNot measured: base image python is not built.\n"},
			notWant: []string{"| run |"},
			target:  target{verdict: "not measured"},
		},
		{
			name:   "not run",
			target: target{verdict: "not measured"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := benchReport()
			r.cluster = &clusterResult{dockerfile: tc.res}
			md := r.markdown()
			section := r.cluster.markdown()
			if tc.res == nil && strings.Contains(section, "dockerfile://") {
				t.Errorf("a cluster run without the part has its table:\n%s", section)
			}
			if !strings.Contains(md, section) {
				t.Errorf("the report lacks the cluster section:\n%s", md)
			}
			for _, want := range tc.want {
				if !strings.Contains(section, want) {
					t.Errorf("cluster section lacks %q:\n%s", want, section)
				}
			}
			// The table closes the cluster section, after the ko:// one.
			table := clusterDockerfileMarkdown(tc.res)
			if !strings.HasSuffix(section, table) {
				t.Errorf("the cluster section does not end with the dockerfile:// table:\n%s", section)
			}
			for _, not := range tc.notWant {
				if strings.Contains(table, not) {
					t.Errorf("dockerfile:// table has %q:\n%s", not, table)
				}
			}
			got := findTarget(t, r, "dockerfile://", "test cluster", "< 8.00 s")
			if got.measured != tc.target.measured || got.verdict != tc.target.verdict {
				t.Errorf("target = %q, %q; want %q, %q", got.measured, got.verdict, tc.target.measured, tc.target.verdict)
			}
			if !strings.Contains(md, "| "+got.what+" | "+got.measured+" | "+got.verdict+" |\n") {
				t.Errorf("the targets table lacks the row of %q:\n%s", got.what, md)
			}
		})
	}
	// Without the cluster part the target is there, not measured, and
	// knit dev's dockerfile:// target is judged apart.
	r := benchReport()
	if got := findTarget(t, r, "dockerfile://", "test cluster"); got.verdict != "not measured" {
		t.Errorf("target without a cluster run = %+v", got)
	}
	if got := findTarget(t, r, "dockerfile://", "< 5.00 s"); strings.Contains(got.what, "cluster") {
		t.Errorf("knit dev's target is %q", got.what)
	}
}
