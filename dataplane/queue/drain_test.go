package queue

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"
)

// waitQuiet returns once no request arrived for the quiet period; each
// request restarts it.
func TestDrainerWaitQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrainer()
		done := make(chan time.Duration)
		start := time.Now()
		go func() {
			d.waitQuiet(context.Background(), 10*time.Second)
			done <- time.Since(start)
		}()
		synctest.Wait()
		if !d.Draining() {
			t.Fatal("not draining after waitQuiet started")
		}
		time.Sleep(4 * time.Second)
		d.touch() // a request at 4 s
		if got := <-done; got != 14*time.Second {
			t.Errorf("waitQuiet returned after %v, want 14s (10 s after the last request)", got)
		}
	})
}

func TestDrainerTouchIsFreeUntilDraining(t *testing.T) {
	d := newDrainer()
	d.touch()
	if d.lastRequest.Load() != 0 || d.Draining() {
		t.Error("touch recorded a request before draining started")
	}
}

// The app's preStop hook drains the queue-proxy until the quiet period
// passed, when the queue-proxy is stopping too (the pod ends); when it is
// not (the kubelet restarts the app alone after a failed liveness probe),
// the drain is cancelled after drainCancelAfter, so the pod serves again.
func TestWaitForDrain(t *testing.T) {
	for _, tc := range []struct {
		name          string
		stopping      bool
		wantAfter     time.Duration
		wantCancelled bool
	}{
		{"the pod ends: drain for the quiet period", true, 10 * time.Second, false},
		{"only the app restarts: the drain is cancelled", false, drainCancelAfter, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &Server{
					cfg:      Config{DrainQuietPeriod: 10 * time.Second},
					log:      slog.New(slog.DiscardHandler),
					tracker:  newRequestTracker(time.Now()),
					drain:    newDrainer(),
					stopping: make(chan struct{}),
				}
				if tc.stopping {
					close(s.stopping)
				}
				start := time.Now()
				cancelled := s.waitForDrain(context.Background())
				if took := time.Since(start); took != tc.wantAfter || cancelled != tc.wantCancelled {
					t.Errorf("waitForDrain = %t after %s, want %t after %s", cancelled, took, tc.wantCancelled, tc.wantAfter)
				}
				synctest.Wait()
				if s.drain.Draining() == tc.wantCancelled {
					t.Errorf("draining = %t afterwards, want %t", s.drain.Draining(), !tc.wantCancelled)
				}
			})
		})
	}
}

// A drain cancelled once can begin again: the next preStop hook, or the
// queue-proxy's own shutdown, drains afresh.
func TestDrainerCancelThenDrainAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrainer()
		done := make(chan bool)
		go func() { done <- d.waitQuiet(context.Background(), time.Minute) }()
		synctest.Wait()
		d.cancel()
		if !<-done || d.Draining() {
			t.Fatal("cancel did not end the drain")
		}
		start := time.Now()
		if d.waitQuiet(context.Background(), time.Minute) || time.Since(start) != time.Minute || !d.Draining() {
			t.Errorf("second drain: want a full quiet period, still draining")
		}
	})
}

// /wait-for-drain is reachable from the pod network, as the kubelet's
// preStop hook must reach it: a call from anyone while the queue-proxy is
// not stopping must not take the replica out of its endpoints, not even
// for the moment before the drain would be cancelled, or calling it in a
// loop would keep every replica unready.
func TestWaitForDrainWithoutShutdownLeavesReplicaReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &Server{
			cfg:      Config{DrainQuietPeriod: 10 * time.Second},
			log:      slog.New(slog.DiscardHandler),
			tracker:  newRequestTracker(time.Now()),
			drain:    newDrainer(),
			stopping: make(chan struct{}),
		}
		done := make(chan bool)
		go func() { done <- s.waitForDrain(context.Background()) }()
		synctest.Wait()
		if s.drain.Draining() {
			t.Error("draining while a /wait-for-drain call waits on a queue-proxy that is not stopping")
		}
		if !<-done {
			t.Error("waitForDrain without a shutdown did not report the drain as not done")
		}
		if s.drain.Draining() {
			t.Error("draining after the call returned")
		}
	})
}
