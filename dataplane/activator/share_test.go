package activator

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPeersOf(t *testing.T) {
	three := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}
	for _, tc := range []struct {
		name  string
		addrs []string
		self  string
		want  peers
	}{
		{name: "first of three", addrs: three, self: "10.0.0.1", want: peers{index: 0, count: 3}},
		{name: "last of three", addrs: three, self: "10.0.0.3", want: peers{index: 2, count: 3}},
		{name: "alone", addrs: []string{"10.0.0.1"}, self: "10.0.0.1", want: peers{index: 0, count: 1}},
		{name: "self unset", addrs: three, want: peers{index: -1, count: 3}},
		{name: "self not published yet", addrs: three, self: "10.0.0.9", want: peers{index: -1, count: 3}},
		{name: "self sorts first but is absent", addrs: three, self: "10.0.0.0", want: peers{index: -1, count: 3}},
		{name: "no activator", self: "10.0.0.1", want: peers{index: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, peersOf(tc.addrs, tc.self), cmp.AllowUnexported(peers{})); diff != "" {
				t.Fatalf("peersOf(%v, %q) (-want +got):\n%s", tc.addrs, tc.self, diff)
			}
		})
	}
}

func TestSubset(t *testing.T) {
	listed := func(n int) []string { return []string{"a", "b", "c", "d", "e", "f", "g"}[:n] }
	for _, tc := range []struct {
		name   string
		peers  peers
		cc     int
		listed []string
		want   []string // nil: every replica
	}{
		{name: "zero value is alone", cc: 1, listed: listed(3)},
		{name: "unknown index", peers: peers{index: -1, count: 2}, cc: 1, listed: listed(3)},
		{name: "single activator", peers: peers{index: 0, count: 1}, cc: 1, listed: listed(3)},
		{name: "unlimited is not split", peers: peers{index: 0, count: 2}, cc: 0, listed: listed(3)},
		{name: "fewer replicas than activators", peers: peers{index: 1, count: 3}, cc: 1, listed: listed(2)},
		{name: "no replica", peers: peers{index: 0, count: 2}, cc: 1},
		{name: "3 over 2, first takes the extra", peers: peers{index: 0, count: 2}, cc: 1, listed: listed(3), want: []string{"a", "c"}},
		{name: "3 over 2, second", peers: peers{index: 1, count: 2}, cc: 1, listed: listed(3), want: []string{"b"}},
		{name: "4 over 2", peers: peers{index: 1, count: 2}, cc: 10, listed: listed(4), want: []string{"b", "d"}},
		{name: "as many replicas as activators", peers: peers{index: 2, count: 3}, cc: 1, listed: listed(3), want: []string{"c"}},
		{name: "7 over 3, first", peers: peers{index: 0, count: 3}, cc: 1, listed: listed(7), want: []string{"a", "d", "g"}},
		{name: "7 over 3, last", peers: peers{index: 2, count: 3}, cc: 1, listed: listed(7), want: []string{"c", "f"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.peers.subset(tc.listed, tc.cc)); diff != "" {
				t.Fatalf("%+v.subset(%v, cc %d) (-want +got):\n%s", tc.peers, tc.listed, tc.cc, diff)
			}
		})
	}
}

// Whenever the activators split, every replica is exactly one
// activator's, and their shares differ by at most one.
func TestSubsetSplitsEveryReplicaOnce(t *testing.T) {
	for count := 2; count <= 5; count++ {
		for n := count; n <= 12; n++ {
			var listed []string
			for i := range n {
				listed = append(listed, fmt.Sprintf("10.0.0.%02d:8012", i))
			}
			var all []string
			lo, hi := n, 0
			for index := range count {
				own := peers{index: index, count: count}.subset(listed, 1)
				all = append(all, own...)
				lo, hi = min(lo, len(own)), max(hi, len(own))
			}
			slices.Sort(all)
			if diff := cmp.Diff(listed, all); diff != "" {
				t.Errorf("%d replicas over %d activators: shares together (-want +got):\n%s", n, count, diff)
			}
			if hi-lo > 1 {
				t.Errorf("%d replicas over %d activators: shares of %d to %d replicas", n, count, lo, hi)
			}
		}
	}
}

func TestLimit(t *testing.T) {
	for _, tc := range []struct {
		name              string
		peers             peers
		cc, listed, using int
		want              int
	}{
		{name: "alone, unlimited, no replica", want: 0},
		{name: "alone, unlimited", listed: 1, using: 1, want: math.MaxInt},
		{name: "alone, no replica", cc: 1, want: 0},
		{name: "alone, cc 1 × 3", cc: 1, listed: 3, using: 3, want: 3},
		{name: "alone, cc 10 × 4", cc: 10, listed: 4, using: 4, want: 40},
		{name: "unknown index takes all", peers: peers{index: -1, count: 2}, cc: 1, listed: 3, using: 3, want: 3},
		{name: "single activator", peers: peers{index: 0, count: 1}, cc: 1, listed: 1, using: 1, want: 1},
		{name: "own share of 2", peers: peers{index: 0, count: 2}, cc: 1, listed: 3, using: 2, want: 2},
		{name: "own share of 1", peers: peers{index: 1, count: 2}, cc: 1, listed: 3, using: 1, want: 1},
		{name: "own share not probed yet", peers: peers{index: 1, count: 2}, cc: 1, listed: 3, want: 0},
		{name: "shared, unlimited", peers: peers{index: 0, count: 2}, listed: 3, using: 3, want: math.MaxInt},
		{name: "fewer replicas: a third of 10 × 2", peers: peers{index: 0, count: 3}, cc: 10, listed: 2, using: 2, want: 6},
		{name: "fewer replicas: half of 10 × 1", peers: peers{index: 1, count: 2}, cc: 10, listed: 1, using: 1, want: 5},
		{name: "fewer replicas: at least 1", peers: peers{index: 2, count: 3}, cc: 1, listed: 2, using: 2, want: 1},
		{name: "fewer replicas, none ready", peers: peers{index: 0, count: 3}, cc: 1, listed: 2, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.peers.limit(tc.cc, tc.listed, tc.using); got != tc.want {
				t.Fatalf("%+v.limit(cc %d, listed %d, using %d) = %d, want %d", tc.peers, tc.cc, tc.listed, tc.using, got, tc.want)
			}
		})
	}
}
