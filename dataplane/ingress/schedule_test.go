package ingress

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildScheduleGivesExactShares(t *testing.T) {
	tests := []struct {
		name     string
		percents []int64
		want     []int
	}{
		{"single", []int64{100}, []int{100}},
		{"even split", []int64{50, 50}, []int{50, 50}},
		{"canary", []int64{80, 20}, []int{80, 20}},
		{"three ways", []int64{33, 33, 34}, []int{33, 33, 34}},
		{"zero share never picked", []int64{100, 0}, []int{100, 0}},
		{"one percent", []int64{99, 1}, []int{99, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sched := buildSchedule(tc.percents)
			got := make([]int, len(tc.percents))
			for _, i := range sched {
				got[i]++
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("picks per target over one cycle (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildScheduleInterleaves(t *testing.T) {
	sched := buildSchedule([]int64{50, 50})
	for i := 1; i < len(sched); i++ {
		if sched[i] == sched[i-1] {
			t.Fatalf("50/50 schedule repeats target %d at slots %d and %d: %v", sched[i], i-1, i, sched)
		}
	}
	if got := buildSchedule([]int64{0, 0}); got != nil {
		t.Errorf("all-zero schedule = %v, want empty", got)
	}
}
