package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// benchCell is a measured cell with req/s and p50; 100 requests, no
// errors unless errs.
func benchCell(shape queuebench.Shape, name string, c int, rps float64, p50 time.Duration, errs int) cell {
	return cell{
		shape: shape, concurrency: c,
		path:   path{name: name, label: name, proc: name != queuebench.Direct, peer: peerOf(name)},
		result: queuebench.Result{Requests: 100, Errors: errs, RequestsPerSec: rps, P50: p50},
	}
}

func benchReport(cells ...cell) *report {
	o := options{
		shapes:      queuebench.Shapes(),
		concurrency: []int{1, 10, 100}, shapeConcurrency: []int{1, 10},
		duration: 3 * time.Second, shapeDuration: time.Second, slices: 3,
	}
	return &report{opts: o, request: &requestPath{cells: cells}}
}

// findTarget is the target whose description has every part.
func findTarget(t *testing.T, r *report, parts ...string) target {
	t.Helper()
	for _, tg := range r.targets() {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(tg.what, p)
		}
		if ok {
			return tg
		}
	}
	t.Fatalf("no target with %q", parts)
	return target{}
}

// knit-queue's throughput against Knative's is judged shape by shape:
// twice Knative's on GET is met there and does not carry a POST that is
// not; errors fail a target whatever the ratio; a shape with no Knative
// cell is not measured.
func TestRatioTargetPerShape(t *testing.T) {
	const get, post, stream, h2c = queuebench.ShapeGet, queuebench.ShapePost, queuebench.ShapeStream, queuebench.ShapeH2C
	r := benchReport(
		benchCell(get, pathProcKnitCC0, 10, 2000, 0, 0), benchCell(get, pathProcKnativeCC0, 10, 1000, 0, 0),
		benchCell(get, pathProcKnitCC10, 10, 1600, 0, 0), benchCell(get, pathProcKnativeCC10, 10, 1000, 0, 0),
		benchCell(post, pathProcKnitCC0, 10, 1200, 0, 0), benchCell(post, pathProcKnativeCC0, 10, 1000, 0, 0),
		benchCell(post, pathProcKnitCC10, 10, 3000, 0, 0), benchCell(post, pathProcKnativeCC10, 10, 1000, 0, 0),
		benchCell(stream, pathProcKnitCC0, 10, 3000, 0, 1), benchCell(stream, pathProcKnativeCC0, 10, 1000, 0, 0),
		benchCell(stream, pathProcKnitCC10, 10, 3000, 0, 0), benchCell(stream, pathProcKnativeCC10, 10, 1000, 0, 0),
		benchCell(h2c, pathProcKnitCC0, 10, 3000, 0, 0), benchCell(h2c, pathProcKnitCC10, 10, 3000, 0, 0),
	)
	tests := []struct {
		shape            queuebench.Shape
		c                string
		verdict, measure string
	}{
		{get, "c10", "target met", "cc=0 2.00×, cc=10 1.60×"},
		{get, "c100", "not measured", ""},
		{post, "c10", "**target not met**", "cc=0 1.20×, cc=10 3.00×"},
		{stream, "c10", "**target not met**", "cc=0 3.00×, cc=10 3.00×"},
		{h2c, "c10", "not measured", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.shape)+" "+tt.c, func(t *testing.T) {
			got := findTarget(t, r, "Knative", tt.shape.Label()+" at "+tt.c)
			if got.verdict != tt.verdict || got.measured != tt.measure {
				t.Errorf("%s: %q, %q; want %q, %q", got.what, got.measured, got.verdict, tt.measure, tt.verdict)
			}
		})
	}
	for _, tg := range r.targets() {
		if strings.HasSuffix(tg.what, " at c1") && strings.Contains(tg.what, "req/s") {
			t.Errorf("a throughput target judged at c1: %s", tg.what)
		}
	}
}

// The added-latency target is judged on every shape at c1 against that
// shape's direct cell, at most targetQueueAddedP50 (the bound itself is
// met), at cc=0 and cc=10.
func TestAddedTargetPerShape(t *testing.T) {
	const get, post, stream, h2c = queuebench.ShapeGet, queuebench.ShapePost, queuebench.ShapeStream, queuebench.ShapeH2C
	us := time.Microsecond
	r := benchReport(
		benchCell(get, queuebench.Direct, 1, 1, 20*us, 0),
		benchCell(get, pathProcKnitCC0, 1, 1, 70*us, 0), benchCell(get, pathProcKnitCC10, 1, 1, 120*us, 0),
		benchCell(post, queuebench.Direct, 1, 1, 20*us, 0),
		benchCell(post, pathProcKnitCC0, 1, 1, 70*us, 0), benchCell(post, pathProcKnitCC10, 1, 1, 121*us, 0),
		benchCell(stream, queuebench.Direct, 1, 1, 300*us, 0),
		benchCell(stream, pathProcKnitCC0, 1, 1, 900*us, 0), benchCell(stream, pathProcKnitCC10, 1, 1, 350*us, 0),
		benchCell(h2c, pathProcKnitCC0, 1, 1, 70*us, 0), benchCell(h2c, pathProcKnitCC10, 1, 1, 70*us, 0),
	)
	tests := []struct {
		shape            queuebench.Shape
		verdict, measure string
	}{
		{get, "target met", "cc=0 +0.050 ms, cc=10 +0.100 ms"},
		{post, "**target not met**", "cc=0 +0.050 ms, cc=10 +0.101 ms"},
		{stream, "**target not met**", "cc=0 +0.600 ms, cc=10 +0.050 ms"},
		{h2c, "not measured", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.shape), func(t *testing.T) {
			got := findTarget(t, r, "adds ≤ 0.100 ms", tt.shape.Label()+" at c1")
			if got.verdict != tt.verdict || got.measured != tt.measure {
				t.Errorf("%s: %q, %q; want %q, %q", got.what, got.measured, got.verdict, tt.measure, tt.verdict)
			}
		})
	}
}

// The side-by-side table has a row per shape, concurrency and cc with
// ratios against the same shape's cells: the fast path off at cc=0
// only, Knative's and the bare proxy's beside it.
func TestSideBySideRowsPerShape(t *testing.T) {
	const post = queuebench.ShapePost
	ms := time.Millisecond
	r := benchReport(
		benchCell(queuebench.ShapeGet, pathProcKnitCC0, 10, 9999, ms, 0),
		benchCell(post, queuebench.Direct, 10, 4000, ms, 0),
		benchCell(post, pathProcKnitCC0, 10, 3000, 2*ms, 0),
		benchCell(post, pathProcKnitCC0NoFast, 10, 2000, 3*ms, 0),
		benchCell(post, pathProcKnativeCC0, 10, 1500, 4*ms, 0),
		benchCell(post, pathProcBare, 10, 2500, 3*ms, 0),
		benchCell(post, pathProcKnitCC10, 10, 3000, 2*ms, 0),
	)
	row, ok := r.sideBySideRow(post, pathProcKnitCC0, pathProcKnitCC0NoFast, pathProcKnativeCC0, 10)
	want := []string{"POST 4 KiB", "10", "0", "3000", "2000", "**1.50×**", "1500", "**2.00×**", "2500", "**1.20×**", "+1.000 ms", "+2.000 ms", "+3.000 ms"}
	if diff := cmp.Diff(want, row); !ok || diff != "" {
		t.Errorf("cc=0 row (-want +got):\n%s", diff)
	}
	row, _ = r.sideBySideRow(post, pathProcKnitCC10, "", pathProcKnativeCC10, 10)
	want = []string{"POST 4 KiB", "10", "10", "3000", "–", "–", "–", "–", "2500", "**1.20×**", "+1.000 ms", "–", "–"}
	if diff := cmp.Diff(want, row); diff != "" {
		t.Errorf("cc=10 row (-want +got):\n%s", diff)
	}
	if _, ok := r.sideBySideRow(queuebench.ShapeH2C, pathProcKnitCC0, pathProcKnitCC0NoFast, pathProcKnativeCC0, 10); ok {
		t.Error("a row for a shape knit-queue was not measured on")
	}
}

// A path that cannot carry a shape gets an n/a line with the reason,
// not a row; the bare ReverseProxy with the default transport is the
// one such path (no h2c to the app).
func TestNotCarriedIsNA(t *testing.T) {
	rp := path{name: queuebench.ReverseProxy, label: "bare ReverseProxy, default transport"}
	pooled := path{name: queuebench.ReverseProxyPooled, label: "pooled"}
	if carries(rp, queuebench.ShapeH2C, nil) || !carries(rp, queuebench.ShapePost, nil) || !carries(pooled, queuebench.ShapeH2C, nil) {
		t.Fatal("carries: want only h2c through the default-transport ReverseProxy refused")
	}
	r := benchReport()
	r.request.paths = []path{rp, pooled}
	var b strings.Builder
	r.writeNotCarried(&b, false)
	if got := b.String(); !strings.Contains(got, "h2c GET through bare ReverseProxy, default transport: n/a, http.DefaultTransport") || strings.Contains(got, "through pooled") {
		t.Errorf("n/a lines = %q", got)
	}
	// A path that failed its check before the measurement is n/a too,
	// with what failed.
	r.request.na = map[string]map[queuebench.Shape]string{queuebench.ReverseProxyPooled: {queuebench.ShapeStream: "its one request failed: cut short"}}
	b.Reset()
	r.writeNotCarried(&b, false)
	if got := b.String(); !strings.Contains(got, "GET streamed 1 MiB through pooled: n/a, its one request failed: cut short.") {
		t.Errorf("n/a lines = %q", got)
	}
}

func TestParseShapes(t *testing.T) {
	got, err := parseShapes("h2c, get")
	if diff := cmp.Diff([]queuebench.Shape{queuebench.ShapeGet, queuebench.ShapeH2C}, got); err != nil || diff != "" {
		t.Errorf("parseShapes(h2c, get) = %v, %v; want get, h2c in queuebench's order", got, err)
	}
	if _, err := parseShapes("get,put"); err == nil {
		t.Error("parseShapes accepted an unknown shape")
	}
}

// GET runs at -concurrency for -duration; the other shapes at
// -shape-concurrency for -shape-duration.
func TestShapeRuns(t *testing.T) {
	o := benchReport().opts
	want := []shapeRun{
		{queuebench.ShapeGet, []int{1, 10, 100}, 3 * time.Second},
		{queuebench.ShapePost, []int{1, 10}, time.Second},
		{queuebench.ShapeStream, []int{1, 10}, time.Second},
		{queuebench.ShapeH2C, []int{1, 10}, time.Second},
	}
	if diff := cmp.Diff(want, o.shapeRuns(), cmp.AllowUnexported(shapeRun{})); diff != "" {
		t.Errorf("shapeRuns (-want +got):\n%s", diff)
	}
}
