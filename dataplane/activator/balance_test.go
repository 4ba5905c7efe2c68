package activator

import "testing"

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inflight []int
		cc       int
		cursor   int
		want     int
	}{
		{"no endpoint", nil, 1, 0, -1},
		{"first available takes the first free", []int{1, 0, 0}, 1, 2, 1},
		{"first available ignores the cursor", []int{0, 0}, 3, 1, 0},
		{"first available fills an endpoint up to cc", []int{2, 0}, 3, 0, 0},
		{"first available: all full", []int{3, 3}, 3, 0, -1},
		{"round robin from the cursor", []int{0, 0, 0}, 4, 1, 1},
		{"round robin skips full endpoints", []int{0, 4, 0}, 4, 1, 2},
		{"round robin wraps", []int{0, 4, 4}, 4, 1, 0},
		{"round robin: all full", []int{4, 4}, 4, 0, -1},
		{"cursor past the end wraps", []int{0, 0}, 10, 5, 1},
		{"unlimited: round robin whatever the load", []int{100, 100, 100}, 0, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var eps []*endpoint
			for _, n := range tc.inflight {
				eps = append(eps, &endpoint{inflight: n})
			}
			if got := choose(eps, tc.cc, tc.cursor); got != tc.want {
				t.Fatalf("choose(%v, cc %d, cursor %d) = %d, want %d", tc.inflight, tc.cc, tc.cursor, got, tc.want)
			}
		})
	}
}
