package queue

import (
	"context"
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
