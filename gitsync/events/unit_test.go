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
		for _, old := range f.push(queued{event: testEvent(t, TypeRevisionReady, i)}) {
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

// TestFifoBytes: the byte bound drops the oldest events until the rest
// fit, and an event bigger than the bound alone is dropped itself; the ids
// follow what is queued.
func TestFifoBytes(t *testing.T) {
	f := fifo{limit: 100, maxBytes: 10}
	ev := func(i, size int) queued {
		return queued{event: testEvent(t, TypeRevisionReady, i), raw: make([]byte, size)}
	}
	indexes := func(qs []queued) []int {
		var out []int
		for _, q := range qs {
			out = append(out, idIndex(t, q.event.ID()))
		}
		return out
	}
	steps := []struct {
		push        queued
		wantDropped []int
		wantBytes   int
	}{
		{ev(0, 4), nil, 4},
		{ev(1, 4), nil, 8},
		{ev(2, 4), []int{0}, 8},
		{ev(3, 9), []int{1, 2}, 9},
		{ev(4, 11), []int{3, 4}, 0},
		{ev(5, 10), nil, 10},
	}
	for i, s := range steps {
		if diff := cmp.Diff(s.wantDropped, indexes(f.push(s.push))); diff != "" {
			t.Errorf("step %d: dropped (-want +got):\n%s", i, diff)
		}
		if f.bytes != s.wantBytes {
			t.Errorf("step %d: bytes = %d, want %d", i, f.bytes, s.wantBytes)
		}
	}
	if !f.has(testEvent(t, TypeRevisionReady, 5).ID()) || f.has(testEvent(t, TypeRevisionReady, 3).ID()) || len(f.ids) != 1 {
		t.Errorf("ids = %v, want event 5's alone", f.ids)
	}
}

func TestRecentIDs(t *testing.T) {
	r := newRecentIDs(3)
	for _, id := range []string{"a", "b", "a", "c", "d", "e"} {
		r.add(id)
	}
	if diff := cmp.Diff([]string{"c", "d", "e"}, r.list()); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if r.has("a") || r.has("b") || !r.has("c") || !r.has("e") {
		t.Errorf("has: %v", r.set)
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
			got := fmt.Sprint(o.QueueSize, o.QueueBytes, o.BackoffBase, o.BackoffMax, o.AttemptTimeout, o.HTTPClient != nil, o.Registerer != nil, o.Logger != nil)
			if diff := cmp.Diff("1000 524288 100ms 30s 10s true true true", got); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want error containing %q", tc.name, err, tc.want)
		}
	}
}
