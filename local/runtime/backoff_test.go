package runtime

import (
	"testing"
	"time"
)

func TestBackoffSchedule(t *testing.T) {
	var b Backoff
	b.defaults()
	want := []time.Duration{
		500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second,
	}
	for i, w := range want {
		if got := b.Delay(i + 1); got != w {
			t.Errorf("Delay(%d) = %s, want %s", i+1, got, w)
		}
	}
	if got := b.Delay(1000); got != 30*time.Second {
		t.Errorf("Delay(1000) = %s, want the 30s cap", got)
	}
}

func TestBackoffStreak(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: time.Minute, Reset: time.Minute}
	for _, tc := range []struct {
		streak int
		ran    time.Duration
		want   int
	}{
		{0, time.Second, 1},
		{3, 59 * time.Second, 4},
		{7, time.Minute, 1}, // a healthy run starts over
		{7, time.Hour, 1},
	} {
		if got := b.crashesInARow(tc.streak, tc.ran); got != tc.want {
			t.Errorf("crashesInARow(%d, %s) = %d, want %d", tc.streak, tc.ran, got, tc.want)
		}
	}
}
