package queue

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestReadinessTransitions(t *testing.T) {
	tests := []struct {
		name             string
		success, failure int
		results          string // 'y' pass, 'n' fail
		want             string // readiness after each result
	}{
		{"first success makes ready", 1, 3, "nny", "__R"},
		{"three failures in a row make unready", 1, 3, "ynnynnn", "RRRRRR_"},
		{"success threshold needs a run", 2, 1, "ynyyn", "___R_"},
		{"failure threshold one", 1, 1, "yny", "R_R"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := readiness{successNeed: tt.success, failureNeed: tt.failure}
			var got strings.Builder
			for _, c := range tt.results {
				r.observe(c == 'y')
				if r.ready {
					got.WriteByte('R')
				} else {
					got.WriteByte('_')
				}
			}
			if got.String() != tt.want {
				t.Errorf("readiness after %s = %s, want %s", tt.results, got.String(), tt.want)
			}
		})
	}
}

// The prober retries every 25 ms until the app first answers, then probes
// at the steady period.
func TestProberLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var up atomic.Bool
		var calls atomic.Int32
		p := newProber([]userProbe{{
			check: func(context.Context) error {
				calls.Add(1)
				if up.Load() {
					return nil
				}
				return errors.New("connection refused")
			},
			period: time.Second, successThreshold: 1, failureThreshold: 2,
		}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go p.run(ctx)

		time.Sleep(100*time.Millisecond + time.Millisecond)
		synctest.Wait()
		if got := calls.Load(); got != 21 { // every 5 ms from 0 to 100 ms
			t.Errorf("probes in the first 100 ms = %d, want 21", got)
		}
		time.Sleep(fastProbeFor - 100*time.Millisecond)
		synctest.Wait()
		calls.Store(0)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if got := calls.Load(); got != 4 { // every 25 ms after the first second
			t.Errorf("probes in 100 ms after the first second = %d, want 4", got)
		}
		if p.Ready() {
			t.Error("ready before the app answered")
		}

		// A probe of the queue-proxy before the app was ever ready is
		// held: unready after probeHold, ready the moment the app is.
		if p.ReadyHeld(t.Context()) {
			t.Error("ReadyHeld = true while the app is down")
		}
		held := make(chan bool, 1)
		go func() { held <- p.ReadyHeld(t.Context()) }()
		time.Sleep(10 * time.Millisecond)
		up.Store(true)
		time.Sleep(25 * time.Millisecond)
		synctest.Wait()
		select {
		case ok := <-held:
			if !ok {
				t.Error("a held probe answered unready after the app came up")
			}
		default:
			t.Error("a held probe is still waiting 25 ms after the app came up")
		}
		if !p.Ready() {
			t.Fatal("not ready after the app answered")
		}

		calls.Store(0)
		time.Sleep(3*time.Second + time.Millisecond)
		synctest.Wait()
		if got := calls.Load(); got != 3 {
			t.Errorf("probes in 3 s once ready = %d, want 3 (steady 1 s period)", got)
		}

		up.Store(false)
		time.Sleep(time.Second)
		synctest.Wait()
		if !p.Ready() {
			t.Error("unready after one failure, want failureThreshold 2")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if p.Ready() {
			t.Error("still ready after two failures")
		}
	})
}
