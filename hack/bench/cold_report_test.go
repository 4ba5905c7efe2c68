package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func coldRuns(ms ...[3]float64) []coldRun {
	d := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	var out []coldRun
	for _, m := range ms {
		out = append(out, coldRun{app: d(m[0]), runc: d(m[1]), ttfb: d(m[2])})
	}
	return out
}

// Medians are taken column by column, and added by knit is the
// difference of the medians, not the median of the differences.
func TestSummarize(t *testing.T) {
	runs := coldRuns([3]float64{3, 0, 60}, [3]float64{9, 0, 50}, [3]float64{4, 0, 70})
	want := coldSummary{app: 4 * time.Millisecond, ttfb: 60 * time.Millisecond}
	if got := summarize(runs); got != want || got.added() != 56*time.Millisecond {
		t.Errorf("summarize = %+v, added %s; want %+v, added 56ms", got, got.added(), want)
	}
	even := coldRuns([3]float64{2, 40, 50}, [3]float64{4, 60, 70})
	if got := summarize(even); got.app != 3*time.Millisecond || got.runc != 50*time.Millisecond || got.ttfb != 60*time.Millisecond {
		t.Errorf("summarize of two runs = %+v; want the means of the middle two", got)
	}
}

// With the image measured, the section has a row per run with both
// Revisions, a median row and a side-by-side table of the medians.
func TestColdMarkdownSideBySide(t *testing.T) {
	c := &coldResult{
		runs:  coldRuns([3]float64{3, 0, 50}, [3]float64{4, 0, 60}, [3]float64{5, 0, 40}),
		image: coldRuns([3]float64{3, 40, 150}, [3]float64{3, 50, 170}),
	}
	md := c.markdown()
	for _, want := range []string{
		"| 1 | 3.0 ms | 50.0 ms | 47.0 ms | 3.0 ms | 40.0 ms | 150.0 ms | 147.0 ms |\n",
		"| 3 | 5.0 ms | 40.0 ms | 35.0 ms | – | – | – | – |\n",
		"| **median** | **4.0 ms** | **50.0 ms** | **46.0 ms** | **3.0 ms** | **45.0 ms** | **160.0 ms** | **157.0 ms** |\n",
		"| ko:// (a process of this machine) | 4.0 ms | – | 50.0 ms | 46.0 ms |\n",
		"| image (runc over an overlay snapshot) | 3.0 ms | 45.0 ms | 160.0 ms | 157.0 ms |\n",
		"adds 110.0 ms to the ko:// one; runc alone takes 42.0 ms more than the app alone.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
}

// Without the image the table is the ko:// one it always was, with why
// the image was not measured.
func TestColdMarkdownImageSkipped(t *testing.T) {
	c := &coldResult{runs: coldRuns([3]float64{3, 0, 50}), imageSkipped: "knit dev runs container images only as root"}
	md := c.markdown()
	tail := md[strings.Index(md, "\n| run |"):]
	want := "\n| run | app alone: exec → first byte | cold start: request → first byte | cold start − app |\n" +
		"|---:|---:|---:|---:|\n" +
		"| 1 | 3.0 ms | 50.0 ms | 47.0 ms |\n" +
		"| **median** | **3.0 ms** | **50.0 ms** | **47.0 ms** |\n"
	if diff := cmp.Diff(want, tail); diff != "" {
		t.Errorf("ko:// table (-want +got):\n%s", diff)
	}
	if !strings.Contains(md, "The same app as an image was not measured: knit dev runs container images only as root.") {
		t.Errorf("no reason for the skipped image:\n%s", md)
	}
}

// The image Revision is judged by the same bound as the ko:// one, and
// not measured when it did not run.
func TestImageColdTarget(t *testing.T) {
	r := benchReport()
	r.cold = &coldResult{runs: coldRuns([3]float64{3, 0, 40}), image: coldRuns([3]float64{3, 40, 150})}
	if got := findTarget(t, r, "cold start <"); got.verdict != "target met" || got.measured != "40.0 ms − 3.0 ms = 37.0 ms" {
		t.Errorf("ko:// target: %+v", got)
	}
	if got := findTarget(t, r, "image Revision"); got.verdict != "**target not met**" || got.measured != "150.0 ms − 3.0 ms = 147.0 ms" {
		t.Errorf("image target: %+v", got)
	}
	r.cold.image = nil
	if got := findTarget(t, r, "image Revision"); got.verdict != "not measured" {
		t.Errorf("image target without runs: %+v", got)
	}
}

func TestTurnOrder(t *testing.T) {
	s := []string{"ko", "image", "x"}
	for i, want := range [][]string{{"ko", "image", "x"}, {"image", "x", "ko"}, {"x", "ko", "image"}, {"ko", "image", "x"}} {
		if diff := cmp.Diff(want, turnOrder(s, i)); diff != "" {
			t.Errorf("round %d (-want +got):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff([]string{"ko", "image", "x"}, s); diff != "" {
		t.Errorf("turnOrder changed its argument: %v", s)
	}
	if got := turnOrder([]string(nil), 3); got != nil {
		t.Errorf("turnOrder(nil) = %v", got)
	}
}
