package activator

import (
	"math"
	"slices"
)

// peers is where this activator stands among the ready activators, which
// all serve every Revision in Proxy mode: each must take only its share of
// a Revision's replicas, or the replicas get count × containerConcurrency.
// The zero value, like any unknown index or a single activator, is alone:
// the activator takes every replica and all their capacity.
type peers struct {
	index int // position of this activator among them sorted; -1 when not among them
	count int // ready activators
}

// peersOf places self among the addresses of the ready activators,
// sorted and without repeats. An empty self (knit dev, tests) or one not
// yet published (an activator starting, or leaving) is index -1.
func peersOf(addrs []string, self string) peers {
	i, found := slices.BinarySearch(addrs, self)
	if self == "" || !found {
		i = -1
	}
	return peers{index: i, count: len(addrs)}
}

func (p peers) alone() bool { return p.index < 0 || p.count <= 1 }

// subset returns the addresses, of a Revision's replicas listed (sorted:
// every activator splits the same list), this activator sends requests
// to, or nil when it sends to all of them: alone, containerConcurrency 0
// (nothing to split) or fewer replicas than activators (see limit).
//
// Replica i goes to activator i mod count. Like Knative's contiguous
// slices plus one left-over replica for each of the first activators,
// that is disjoint, covers every replica, and gives each activator
// ⌊n/count⌋ or one more, the first n mod count getting the extra one; it
// is one rule with no remainder case.
func (p peers) subset(listed []string, containerConcurrency int) []string {
	if p.alone() || containerConcurrency == 0 || len(listed) < p.count {
		return nil
	}
	own := make([]string, 0, (len(listed)+p.count-1)/p.count)
	for i := p.index; i < len(listed); i += p.count {
		own = append(own, listed[i])
	}
	return own
}

// limit is how many requests this activator lets through at once to the
// using replicas it sends to, of listed a Revision has: containerConcurrency
// each, unlimited when it is 0, none without a replica. With fewer
// replicas than activators every activator uses them all, so it takes its
// share of their capacity, at least one request so it never stalls.
func (p peers) limit(containerConcurrency, listed, using int) int {
	switch {
	case using == 0:
		return 0
	case containerConcurrency == 0:
		return math.MaxInt
	case !p.alone() && listed < p.count:
		return max(1, containerConcurrency*using/p.count)
	default:
		return containerConcurrency * using
	}
}
