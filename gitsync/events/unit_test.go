package events

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBackoff(t *testing.T) {
	base, max := 100*time.Millisecond, 30*time.Second
	cases := []struct {
		attempt  int
		lo, hi   time.Duration // r = 0 gives lo, r → 1 approaches hi
		wantFull time.Duration
	}{
		{0, 50 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond},
		{1, 100 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond},
		{4, 800 * time.Millisecond, 1600 * time.Millisecond, 1600 * time.Millisecond},
		{9, 15 * time.Second, 30 * time.Second, 30 * time.Second}, // 51.2s capped
		{200, 15 * time.Second, 30 * time.Second, 30 * time.Second},
	}
	for _, tc := range cases {
		if got := backoff(tc.attempt, base, max, 0); got != tc.lo {
			t.Errorf("backoff(%d, r=0) = %v, want %v", tc.attempt, got, tc.lo)
		}
		if got := backoff(tc.attempt, base, max, 0.999999); got < tc.lo || got >= tc.hi {
			t.Errorf("backoff(%d, r≈1) = %v, want in [%v, %v)", tc.attempt, got, tc.lo, tc.hi)
		}
	}
}

func TestFifo(t *testing.T) {
	f := fifo{limit: 20}
	var dropped []int
	for i := range 50 {
		if old, over := f.push(queued{event: testEvent(t, TypeRevisionReady, i)}); over {
			dropped = append(dropped, idIndex(t, old.event.ID()))
		}
	}
	if f.len() != 20 || len(dropped) != 30 {
		t.Fatalf("len %d, dropped %d; want 20 and 30", f.len(), len(dropped))
	}
	for i, n := range dropped {
		if n != i {
			t.Fatalf("dropped %v, want 0..29 in order", dropped)
		}
	}
	for want := 30; want < 50; want++ {
		q, ok := f.pop()
		if !ok || idIndex(t, q.event.ID()) != want {
			t.Fatalf("pop = %v, want event %d", ok, want)
		}
	}
	if _, ok := f.pop(); ok {
		t.Error("pop on empty fifo succeeded")
	}
	// Interleaved use across the wrap point keeps order.
	next, want := 100, 100
	for range 10 {
		for range 7 {
			f.push(queued{event: testEvent(t, TypeRevisionReady, next)})
			next++
		}
		for range 7 {
			q, _ := f.pop()
			if got := idIndex(t, q.event.ID()); got != want {
				t.Fatalf("pop = %d, want %d", got, want)
			}
			want++
		}
	}
}

// idIndex recovers i from testEvent(…, i) by its deterministic id.
var idIndexCache = map[string]int{}

func idIndex(t *testing.T, id string) int {
	t.Helper()
	if len(idIndexCache) == 0 {
		for i := range 200 {
			idIndexCache[testEvent(t, TypeRevisionReady, i).ID()] = i
		}
	}
	i, ok := idIndexCache[id]
	if !ok {
		t.Fatalf("unknown id %s", id)
	}
	return i
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"zero", Options{}, ""},
		{"negative queue", Options{QueueSize: -1}, "QueueSize -1 is negative"},
		{"negative backoff", Options{BackoffBase: -time.Second}, "BackoffBase -1000000000 is negative"},
		{"max below base", Options{BackoffBase: time.Second, BackoffMax: time.Millisecond}, "below BackoffBase"},
	}
	for _, tc := range cases {
		o := tc.opts
		err := o.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			got := fmt.Sprint(o.QueueSize, o.BackoffBase, o.BackoffMax, o.AttemptTimeout, o.HTTPClient != nil, o.Registerer != nil, o.Logger != nil)
			if diff := cmp.Diff("1000 100ms 30s 10s true true true", got); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want error containing %q", tc.name, err, tc.want)
		}
	}
}
