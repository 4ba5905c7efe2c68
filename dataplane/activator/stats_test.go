package activator

import (
	"context"
	"testing"
	"time"
)

func TestLoadWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type change struct {
		ms, delta int
	}
	for _, tc := range []struct {
		name                  string
		changes               []change
		end                   int // ms
		concurrency, rps      float64
		report, wasActiveLast bool
	}{
		{name: "idle", end: 1000},
		{name: "idle after a busy window reports zero once", end: 1000, wasActiveLast: true, report: true},
		{name: "two requests of 500ms in 1s average 1", changes: []change{{0, 1}, {0, 1}, {500, -1}, {500, -1}},
			end: 1000, concurrency: 1, rps: 2, report: true},
		{name: "one request held the whole window", changes: []change{{0, 1}}, end: 2000, concurrency: 1, rps: 0.5, report: true},
		{name: "a request arriving at 750ms of 1s", changes: []change{{750, 1}}, end: 1000, concurrency: 0.25, rps: 1, report: true},
		{name: "a waiting burst", changes: []change{{0, 10}, {100, -10}}, end: 1000, concurrency: 1, rps: 10, report: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l load
			l.reset(t0)
			l.active = tc.wasActiveLast
			for _, c := range tc.changes {
				l.change(at(c.ms), c.delta)
			}
			c, rps, report := l.window(at(tc.end))
			if !near(c, tc.concurrency) || !near(rps, tc.rps) || report != tc.report {
				t.Fatalf("window = (%v, %v, %v), want (%v, %v, %v)", c, rps, report, tc.concurrency, tc.rps, tc.report)
			}
		})
	}
}

// A request held across windows counts in each; once it leaves, one
// window reports zero and then nothing.
func TestLoadWindowsFollowEachOther(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var l load
	l.reset(t0)
	l.change(t0.Add(500*time.Millisecond), 1)
	type window struct {
		c, rps float64
		report bool
	}
	var got []window
	for i, leave := range []bool{false, true, false, false} {
		end := t0.Add(time.Duration(i+1) * time.Second)
		if leave {
			l.change(end.Add(-250*time.Millisecond), -1)
		}
		c, rps, report := l.window(end)
		got = append(got, window{c, rps, report})
	}
	want := []window{{0.5, 1, true}, {0.75, 0, true}, {0, 0, true}, {0, 0, false}}
	for i := range want {
		if !near(got[i].c, want[i].c) || !near(got[i].rps, want[i].rps) || got[i].report != want[i].report {
			t.Fatalf("windows = %v, want %v", got, want)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// The report round sends the load the activator holds, then one zero
// once it is gone, then nothing.
func TestReportSendsLoad(t *testing.T) {
	rep := newFakeReporter()
	a, url := startActivator(t, Options{Reporter: rep, StatsInterval: time.Hour})
	a.SetEndpoints(rev, 1, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pending := sendAsync(ctx, newClient(t), url, rev)
	receive(t, rep.pokes, "the request's own poke")

	a.report(time.Now())
	got := receive(t, rep.loads, "a load report")
	if got.rev != rev || got.concurrency <= 0 || got.rps <= 0 {
		t.Fatalf("load report %+v, want %s with concurrency and rps above zero", got, rev)
	}

	cancel()
	receive(t, pending, "the canceled request")
	eventually(t, "the request to leave the activator", func() bool {
		l := &a.get(rev).load
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.current == 0
	})
	a.report(time.Now()) // the window it left in
	if got := receive(t, rep.loads, "the last busy window"); got.concurrency <= 0 {
		t.Fatalf("the window the request left in: %+v, want concurrency above zero", got)
	}
	a.report(time.Now())
	if got := receive(t, rep.loads, "the zero report"); got.concurrency != 0 || got.rps != 0 {
		t.Fatalf("after the load left: %+v, want one report of zero", got)
	}
	a.report(time.Now())
	select {
	case got := <-rep.loads:
		t.Fatalf("idle revision reported again: %+v", got)
	case got := <-rep.pokes:
		t.Fatalf("poked %s with nothing waiting", got)
	default:
	}
}

// While a request waits for a Revision at zero, every report round pokes
// again, so a scale-from-zero the autoscaler missed is asked for again.
func TestPokesRepeatWhileWaiting(t *testing.T) {
	rep := newFakeReporter()
	a, url := startActivator(t, Options{Reporter: rep, StatsInterval: 5 * time.Millisecond})
	a.SetEndpoints(rev, 1, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pending := sendAsync(ctx, newClient(t), url, rev)
	for i := range 4 {
		if got := receive(t, rep.pokes, "a poke"); got != rev {
			t.Fatalf("poke %d for %s, want %s", i, got, rev)
		}
	}
	cancel()
	receive(t, pending, "the canceled request")
}
