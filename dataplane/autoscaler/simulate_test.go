package autoscaler

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knitops/knit/api/autoscaling"
)

var update = flag.Bool("update", false, "rewrite the want section of testdata/*.sim from the current output")

const (
	traceMarker = "-- trace --\n"
	wantMarker  = "-- want --\n"
)

// fixture is one testdata/*.sim file: option lines (as the CLI flags, one
// per line, # for comments), then the trace, then the expected output. Adding
// a case is adding a file.
type fixture struct {
	opts  Options
	head  string // everything before the want section, kept for -update
	trace string
	want  string
}

func readFixture(t *testing.T, path string) fixture {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	ti, wi := strings.Index(text, traceMarker), strings.Index(text, wantMarker)
	if ti < 0 || wi < ti {
		t.Fatalf("%s: want option lines, %q, the trace, %q, the output", path, traceMarker, wantMarker)
	}
	f := fixture{
		opts:  Options{Annotations: map[string]string{}, Config: map[string]string{}},
		head:  text[:wi],
		trace: text[ti+len(traceMarker) : wi],
		want:  text[wi+len(wantMarker):],
	}
	for i, line := range strings.Split(text[:ti], "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := f.opts.setOption(line); err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
	}
	return f
}

// setOption applies one "name value" line of a fixture.
func (o *Options) setOption(line string) error {
	name, value, _ := strings.Cut(line, " ")
	key, val, _ := strings.Cut(value, "=")
	switch name {
	case "annotation":
		o.Annotations[key] = val
	case "config":
		o.Config[key] = val
	case "container-concurrency":
		n, err := strconv.ParseInt(value, 10, 64)
		o.ContainerConcurrency = n
		return err
	case "pod-start-delay":
		n, err := strconv.Atoi(value)
		o.PodStartDelay = time.Duration(n) * time.Second
		return err
	default:
		return fmt.Errorf("unknown option %q", name)
	}
	return nil
}

func TestSimulateGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.sim")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/*.sim fixtures: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f := readFixture(t, path)
			var out bytes.Buffer
			if err := Simulate(strings.NewReader(f.trace), f.opts, &out); err != nil {
				t.Fatalf("Simulate: %v", err)
			}
			if *update {
				if err := os.WriteFile(path, []byte(f.head+wantMarker+out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(f.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSimulateDeterministic(t *testing.T) {
	f := readFixture(t, "testdata/cold-start-burst.sim")
	var first, second bytes.Buffer
	if err := Simulate(strings.NewReader(f.trace), f.opts, &first); err != nil {
		t.Fatal(err)
	}
	if err := Simulate(strings.NewReader(f.trace), f.opts, &second); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first.String(), second.String()); diff != "" {
		t.Errorf("two runs differ (-first +second):\n%s", diff)
	}
}

func TestSimulateTicksEveryTwoSeconds(t *testing.T) {
	var out bytes.Buffer
	trace := "second,concurrency,rps\n0,0,0\n1,0,0\n2,0,0\n3,0,0\n4,0,0\n"
	if err := Simulate(strings.NewReader(trace), Options{}, &out); err != nil {
		t.Fatal(err)
	}
	// A new revision starts at its initial scale of one pod, ready at once;
	// the first tick is at second 2.
	want := "second,desired_pods,ready_pods,panic\n2,1,1,0\n4,1,1,0\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestSimulateFirstTick: Knative's decider first decides when its 2s ticker
// first fires, a tick interval after it starts with the revision, so load
// present from second 0 is acted on at second 2 and there is no row for
// second 0 (the revision is created then, at its initial scale).
func TestSimulateFirstTick(t *testing.T) {
	const header = "second,desired_pods,ready_pods,panic\n"
	target10 := map[string]string{autoscaling.TargetAnnotationKey: "10"}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		config      map[string]string
		load        string // concurrency every second
		seconds     int
		want        string
	}{
		{"a burst from second 0 is decided at 2s", target10, nil, "35", 5, header + "2,5,5,1\n4,5,5,1\n"},
		{"from zero initial scale, woken at 2s",
			map[string]string{autoscaling.TargetAnnotationKey: "10", autoscaling.InitialScaleAnnotationKey: "0"},
			map[string]string{KeyAllowZeroInitialScale: "true"}, "14", 5, header + "2,2,2,1\n4,2,2,1\n"},
		{"a trace shorter than a tick has no tick", target10, nil, "35", 2, header},
		{"idle: the initial pod until the first tick and after", target10, nil, "0", 3, header + "2,1,1,0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace := "second,concurrency,rps\n"
			for s := range tc.seconds {
				trace += fmt.Sprintf("%d,%s,0\n", s, tc.load)
			}
			var out bytes.Buffer
			opts := Options{Annotations: tc.annotations, Config: tc.config}
			if err := Simulate(strings.NewReader(trace), opts, &out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSimulateBadTrace(t *testing.T) {
	for _, tc := range []struct {
		trace string
		want  string
	}{
		{"", `trace is empty: want the header "second,concurrency,rps"`},
		{"second,concurrency\n0,1\n", `trace line 1: header "second,concurrency", want "second,concurrency,rps"`},
		{"second,concurrency,rps\n", "trace has no rows after the header"},
		{"second,concurrency,rps\n0,1,1\n1,2\n", "trace line 3: want 3 fields (second,concurrency,rps), got 2"},
		{"second,concurrency,rps\nzero,1,1\n", `trace line 2: second "zero" is not an integer`},
		{"second,concurrency,rps\n0,1,1\n2,1,1\n", "trace line 3: second 2 out of sequence, want 1 (one row per second from 0)"},
		{"second,concurrency,rps\n1,1,1\n", "trace line 2: second 1 out of sequence, want 0 (one row per second from 0)"},
		{"second,concurrency,rps\n0,-1,1\n", `trace line 2: concurrency "-1" is not a non-negative number`},
		{"second,concurrency,rps\n0,1,NaN\n", `trace line 2: rps "NaN" is not a non-negative number`},
		{"# comment\nsecond,concurrency,rps\n0,1,1\n\n1,\"2,1\n", `trace line 5: extraneous or missing " in quoted-field`},
		{"second,concurrency,rps\n0,1,1\n# a comment\n1,x,1\n", `trace line 4: concurrency "x" is not a non-negative number`},
	} {
		var out bytes.Buffer
		err := Simulate(strings.NewReader(tc.trace), Options{}, &out)
		if err == nil {
			t.Errorf("Simulate(%q) = nil error, want %q", tc.trace, tc.want)
			continue
		}
		if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
			t.Errorf("Simulate(%q) error (-want +got):\n%s", tc.trace, diff)
		}
		if out.Len() != 0 {
			t.Errorf("Simulate(%q) wrote %q before failing", tc.trace, out.String())
		}
	}
}

func TestSimulateBadOptions(t *testing.T) {
	trace := "second,concurrency,rps\n0,1,1\n"
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Config: map[string]string{"stable-windw": "30s"}}, `unknown config-autoscaler key "stable-windw"`},
		{Options{Annotations: map[string]string{autoscaling.Prefix + "minscale": "1"}}, `unknown autoscaling annotation "autoscaling.knative.dev/minscale"`},
		{Options{PodStartDelay: -time.Second}, "pod start delay -1s must not be negative"},
		{Options{Config: map[string]string{KeyStableWindow: "1s"}}, `config-autoscaler stable-window="1s": must be in [6s, 1h0m0s]`},
		{Options{Annotations: map[string]string{autoscaling.MaxScaleAnnotationKey: "-1"}}, `annotation autoscaling.knative.dev/max-scale="-1": must be between 0 and 2147483647`},
		{Options{Annotations: map[string]string{autoscaling.ClassAnnotationKey: autoscaling.ClassHPA}}, `autoscaler class is not kpa.autoscaling.knative.dev: annotation autoscaling.knative.dev/class="hpa.autoscaling.knative.dev": knit's autoscaler decides only for kpa.autoscaling.knative.dev`},
	} {
		err := Simulate(strings.NewReader(trace), tc.opts, &bytes.Buffer{})
		if err == nil {
			t.Errorf("Simulate(%+v) = nil error, want %q", tc.opts, tc.want)
			continue
		}
		if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
			t.Errorf("Simulate(%+v) error (-want +got):\n%s", tc.opts, diff)
		}
	}
}
