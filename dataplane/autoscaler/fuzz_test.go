package autoscaler

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzReadTrace: a trace file (knit autoscaler simulate --trace) is read
// into samples one per second from 0, each a finite non-negative number,
// or refused with an error naming the line; what was read, written back
// as CSV, reads the same.
func FuzzReadTrace(f *testing.F) {
	for _, s := range []string{
		"second,concurrency,rps\n0,1,2\n1,1.5,3\n",
		"# comment\nsecond, concurrency, rps\n0, 0, 0\n",
		"second,concurrency,rps\n0,1e308,1e-300\n",
		"second,concurrency,rps\n0,NaN,0\n", "second,concurrency,rps\n0,+Inf,0\n", "second,concurrency,rps\n0,-1,0\n",
		"second,concurrency,rps\n1,0,0\n", "second,concurrency,rps\n0,\"1\n2\",0\n", "second,concurrency,rps\n0,0x1p3,0\n",
		"", "second,concurrency\n", "second,concurrency,rps\n0,1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, trace string) {
		samples, err := readTrace(strings.NewReader(trace))
		if err != nil {
			return
		}
		var b strings.Builder
		b.WriteString(traceHeader + "\n")
		for i, s := range samples {
			if s.second != int64(i) {
				t.Fatalf("sample %d has second %d", i, s.second)
			}
			for _, v := range []float64{s.concurrency, s.rps} {
				if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
					t.Fatalf("sample %d: %v is not a finite non-negative number", i, v)
				}
			}
			fmt.Fprintf(&b, "%d,%s,%s\n", s.second, strconv.FormatFloat(s.concurrency, 'g', -1, 64), strconv.FormatFloat(s.rps, 'g', -1, 64))
		}
		again, err := readTrace(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("samples written back do not read: %v\n%s", err, b.String())
		}
		if diff := cmp.Diff(samples, again, cmp.AllowUnexported(sample{})); diff != "" {
			t.Fatalf("round trip (-read +again):\n%s", diff)
		}
	})
}

// FuzzSimulate runs knit autoscaler simulate on any fixture — options
// (config-autoscaler keys, annotations, containerConcurrency, pod start
// delay) and a trace, as in testdata/*.sim — and checks that it refuses
// bad options or traces with an error, and otherwise writes one row per
// tick with pod counts between 0 and max-scale.
func FuzzSimulate(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.sim"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no testdata/*.sim fixtures: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		text := string(data)
		if i := strings.Index(text, wantMarker); i >= 0 {
			text = text[:i]
		}
		f.Add(text)
	}
	f.Add("annotation autoscaling.knative.dev/target=0.01\nannotation autoscaling.knative.dev/max-scale=3\n" + traceMarker + "second,concurrency,rps\n0,1e308,1e308\n1,1e308,0\n2,1e308,0\n3,0,0\n4,0,0\n")
	f.Add("annotation autoscaling.knative.dev/metric=rps\nannotation autoscaling.knative.dev/target=1e300\ncontainer-concurrency 1\n" + traceMarker + "second,concurrency,rps\n0,5,5\n1,5,5\n2,5,5\n")
	f.Add("config stable-window=6s\nconfig panic-window-percentage=1\npod-start-delay 100000000000\n" + traceMarker + "second,concurrency,rps\n0,1,1\n1,1,1\n2,50,50\n")
	f.Fuzz(func(t *testing.T, fixture string) {
		head, trace, ok := strings.Cut(fixture, traceMarker)
		if !ok {
			return
		}
		opts := Options{Annotations: map[string]string{}, Config: map[string]string{}}
		for line := range strings.Lines(head) {
			if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if opts.setOption(line) != nil {
				return
			}
		}
		if opts.PodStartDelay < 0 {
			return // the CLI's flag takes no negative delay
		}
		var out bytes.Buffer
		if err := Simulate(strings.NewReader(trace), opts, &out); err != nil {
			return
		}
		spec, _, err := opts.resolve()
		if err != nil {
			t.Fatalf("Simulate ran with options resolve refuses: %v", err)
		}
		rows := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if rows[0] != "second,desired_pods,ready_pods,panic" {
			t.Fatalf("output starts %q", rows[0])
		}
		for _, row := range rows[1:] {
			var second, desired, ready, panicking int64
			if _, err := fmt.Sscanf(row, "%d,%d,%d,%d", &second, &desired, &ready, &panicking); err != nil {
				t.Fatalf("row %q: %v", row, err)
			}
			if desired < 0 || ready < 0 || ready > desired || (spec.Scaler.MaxScale > 0 && desired > int64(spec.Scaler.MaxScale)) {
				t.Fatalf("row %q: pods out of bounds (max-scale %d)", row, spec.Scaler.MaxScale)
			}
		}
	})
}

// FuzzNewSpec resolves any annotations (of Knative's group or not, either
// spelling, any value) with any containerConcurrency, over the defaults:
// the KPA refuses them with an error or gets a spec it can run — a
// positive finite target, positive windows, scale bounds that hold
// together — and never panics.
func FuzzNewSpec(f *testing.F) {
	const g = "autoscaling.knative.dev/"
	f.Add(g+"target", "10", g+"min-scale", "2", g+"max-scale", "5", int64(0))
	f.Add(g+"minScale", "3", g+"min-scale", "3", g+"class", "hpa.autoscaling.knative.dev", int64(1))
	f.Add(g+"metric", "rps", g+"target", "0.01", g+"target-utilization-percentage", "1", int64(1000))
	f.Add(g+"window", "6s", g+"panic-window-percentage", "1", g+"panic-threshold-percentage", "1000", int64(0))
	f.Add(g+"initial-scale", "0", g+"activation-scale", "2147483647", g+"max-scale", "1", int64(0))
	f.Add(g+"target-burst-capacity", "-1", g+"scale-down-delay", "1h", g+"scale-to-zero-pod-retention-period", "59m59s", int64(9223372036854775807))
	f.Add(g+"target", "NaN", g+"window", "1.5s", g+"metric-aggregation-algorithm", "weightedExponential", int64(-1))
	f.Add(g+"target", "1e400", g+"max-scale", "-1", "other", "x", int64(0))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string, cc int64) {
		anns := map[string]string{k1: v1, k2: v2, k3: v3}
		s, err := NewSpec(DefaultConfig(), anns, cc)
		if err != nil {
			return
		}
		d, sc := s.Decider, s.Scaler
		switch {
		case !(d.TargetValue > 0) || math.IsInf(d.TargetValue, 0) || !(d.TotalValue >= d.TargetValue) || math.IsInf(d.TotalValue, 0):
			t.Fatalf("target %v of total %v: want 0 < target ≤ total, finite", d.TargetValue, d.TotalValue)
		case d.StableWindow <= 0 || d.PanicWindow <= 0 || d.PanicWindow > d.StableWindow:
			t.Fatalf("windows: stable %v, panic %v", d.StableWindow, d.PanicWindow)
		case !(d.PanicThreshold > 0) || math.IsInf(d.PanicThreshold, 0):
			t.Fatalf("panic threshold %v", d.PanicThreshold)
		case sc.MinScale < 0 || sc.MaxScale < 0 || (sc.MaxScale > 0 && sc.MinScale > sc.MaxScale):
			t.Fatalf("scale bounds min %d max %d", sc.MinScale, sc.MaxScale)
		case sc.InitialScale < 0 || d.ActivationScale < 1 || (sc.MaxScale > 0 && d.ActivationScale > sc.MaxScale):
			t.Fatalf("initial scale %d, activation scale %d, max %d", sc.InitialScale, d.ActivationScale, sc.MaxScale)
		case d.ScaleDownDelay < 0 || sc.ScaleToZeroPodRetentionPeriod < 0 || math.IsNaN(d.TargetBurstCapacity):
			t.Fatalf("spec %+v", s)
		}
		// The decider takes it and decides on load, none or any.
		dec := NewDecider(d, simulationStart, 0)
		dec.Record(simulationStart, 1e6, 1e6)
		dec.Scale(simulationStart.Add(d.TickInterval), 1)
		if st := dec.Status(); st.Valid && st.DesiredPodCount < 0 {
			t.Fatalf("decision %+v: a negative pod count", st)
		}
	})
}
