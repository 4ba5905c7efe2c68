package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseBuildDurations(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		in          string
		build, push time.Duration
		err         string
	}{
		{in: "build=0.7s push=0.1s", build: 700 * ms, push: 100 * ms},
		{in: "push=0.1s build=2.4s", build: 2400 * ms, push: 100 * ms},
		{in: "build=700ms", build: 700 * ms},
		{in: "build=1m2.5s push=1.234s reused", build: 62500 * ms, push: 1234 * ms},
		{in: "fetch=0.4s build=3s", build: 3 * time.Second},
		{in: "", err: "no build="},
		{in: "fetch=0.4s compile=3.1s push=0.2s", err: "no build="},
		{in: "build=fast", err: `build="fast" is not a duration`},
		{in: "build=1s push=-1s", err: `push="-1s" is not a duration`},
	} {
		build, push, err := parseBuildDurations(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseBuildDurations(%q) = %v, %v, %v; want an error with %q", tc.in, build, push, err, tc.err)
			}
		case err != nil || build != tc.build || push != tc.push:
			t.Errorf("parseBuildDurations(%q) = %v, %v, %v; want %v, %v", tc.in, build, push, err, tc.build, tc.push)
		}
	}
}

func TestDockerfileMarkdown(t *testing.T) {
	ms := time.Millisecond
	measured := &dockerfileResult{
		devStart: 6 * time.Second, basePush: 300 * ms,
		cold: dockerfileRun{total: 20 * time.Second, build: 17 * time.Second, push: 500 * ms},
		warm: []dockerfileRun{
			{total: 3000 * ms, build: 1000 * ms, push: 100 * ms},
			{total: 2500 * ms, build: 800 * ms, push: 200 * ms},
			{total: 4000 * ms, build: 900 * ms, push: 150 * ms},
		},
	}
	slow := &dockerfileResult{
		cold: dockerfileRun{total: 30 * time.Second, build: 25 * time.Second},
		warm: []dockerfileRun{{total: 6 * time.Second, build: 4 * time.Second, push: time.Second}},
	}
	for _, tc := range []struct {
		name    string
		res     *dockerfileResult
		want    []string
		notWant []string
		target  target
	}{
		{
			name: "measured",
			res:  measured,
			want: []string{
				"\n" + dockerfileHeading + "\n",
				"(6s to its banner)",
				"Target: a warm code change push → serving < 5.00 s in knit dev (median).\n",
				"| 1 | cold | 20.00 s | 17.00 s | 0.50 s | 3.00 s |\n",
				"| 2 | warm | 3.00 s | 1.00 s | 0.10 s | 2.00 s |\n",
				"| 3 | warm | 2.50 s | 0.80 s | 0.20 s | 1.70 s |\n",
				"| 4 | warm | 4.00 s | 0.90 s | 0.15 s | 3.10 s |\n",
				// Each median on its own: rollout's is 2.00 s, not 3.00 − 0.90.
				"| **median, warm** | | **3.00 s** | **0.90 s** | **0.15 s** | **2.00 s** |\n",
			},
			target: target{measured: "3.00 s (build 0.90 s, rollout 2.00 s)", verdict: "target met"},
		},
		{
			name:   "slow",
			res:    slow,
			want:   []string{"| 2 | warm | 6.00 s | 4.00 s | 1.00 s | 2.00 s |\n", "| **median, warm** | | **6.00 s** |"},
			target: target{measured: "6.00 s (build 4.00 s, rollout 2.00 s)", verdict: "**target not met**"},
		},
		{
			name:    "no warm runs",
			res:     &dockerfileResult{cold: dockerfileRun{total: 20 * time.Second, build: 17 * time.Second}},
			want:    []string{"| 1 | cold | 20.00 s | 17.00 s | 0.00 s | 3.00 s |\n"},
			notWant: []string{"**median"},
			target:  target{verdict: "not measured"},
		},
		{
			name:    "not root",
			res:     &dockerfileResult{skipped: "not root"},
			want:    []string{"\n" + dockerfileHeading + "\nNot measured: not root.\n"},
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
			r.dockerfile = tc.res
			md := r.markdown()
			if tc.res == nil && strings.Contains(md, dockerfileHeading) {
				t.Errorf("a run without the part has its section:\n%s", md)
			}
			for _, want := range tc.want {
				if !strings.Contains(md, want) {
					t.Errorf("report lacks %q:\n%s", want, md)
				}
			}
			section := md
			if tc.res != nil {
				section = tc.res.markdown()
			}
			for _, not := range tc.notWant {
				if strings.Contains(section, not) {
					t.Errorf("section has %q:\n%s", not, section)
				}
			}
			got := findTarget(t, r, "dockerfile://", "< 5.00 s")
			if got.measured != tc.target.measured || got.verdict != tc.target.verdict {
				t.Errorf("target = %q, %q; want %q, %q", got.measured, got.verdict, tc.target.measured, tc.target.verdict)
			}
		})
	}
}

// The dockerfile:// section sits before the cluster section, so a later
// run without the cluster part still carries that one over alone.
func TestDockerfileSectionKeepsClusterCarried(t *testing.T) {
	r := benchReport()
	r.dockerfile = &dockerfileResult{skipped: "not root"}
	r.carriedCluster = "\n## On a real cluster\n\nnumbers\n"
	got := carriedCluster(r.markdown())
	if !strings.Contains(got, "numbers\n") || strings.Contains(got, "dockerfile://") || strings.Contains(got, "## Targets") {
		t.Errorf("carried cluster section = %q", got)
	}
}
