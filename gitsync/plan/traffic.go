package plan

import (
	"sort"

	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// Canary is an open pull request's share of its base Service's traffic.
type Canary struct {
	// Tag names the target, pr-<N>.
	Tag string
	// RevisionName serves the pull request's head commit.
	RevisionName string
	// Percent of the Service's traffic; 0 gives the tag URL alone.
	Percent int64
}

// WithCanaries adds the canaries to the traffic Git declares (all to the
// latest Revision when it declares none). Their percents are taken from
// Git's targets in proportion, rounded by largest remainder so the total
// stays exactly 100; canaries asking for more than 100 together are
// scaled down to fit. Tag-only targets in Git keep their 0 %.
func WithCanaries(traffic []servingv1.TrafficTarget, canaries []Canary) []servingv1.TrafficTarget {
	if len(canaries) == 0 {
		return traffic
	}
	base := make([]servingv1.TrafficTarget, 0, len(traffic)+len(canaries))
	for _, t := range traffic {
		base = append(base, *t.DeepCopy())
	}
	if len(base) == 0 {
		base = []servingv1.TrafficTarget{{LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}
	}
	asked := make([]int64, len(canaries))
	var total int64
	for i, c := range canaries {
		asked[i] = min(max(c.Percent, 0), 100)
		total += asked[i]
	}
	if total > 100 {
		asked, total = apportion(asked, 100), 100
	}
	shares := make([]int64, len(base))
	for i, t := range base {
		// Within 0..100 as admission holds them (Objects refuses others
		// first), so apportion's products cannot overflow.
		shares[i] = min(max(ptr.Deref(t.Percent, 0), 0), 100)
	}
	shares = apportion(shares, 100-total)
	for i := range base {
		if base[i].Percent != nil {
			base[i].Percent = ptr.To(shares[i])
		}
	}
	for i, c := range canaries {
		base = append(base, servingv1.TrafficTarget{
			Tag: c.Tag, RevisionName: c.RevisionName, LatestRevision: ptr.To(false), Percent: ptr.To(asked[i]),
		})
	}
	return base
}

// apportion scales weights to sum to total by largest remainder; ties go
// to the earlier weight. All-zero weights stay zero. Weights and total
// are percents, 0 to 100, so no product overflows.
func apportion(weights []int64, total int64) []int64 {
	var sum int64
	for _, w := range weights {
		sum += w
	}
	out := make([]int64, len(weights))
	if sum == 0 {
		return out
	}
	type rem struct {
		i int
		r int64
	}
	rems := make([]rem, len(weights))
	var given int64
	for i, w := range weights {
		out[i] = w * total / sum
		given += out[i]
		rems[i] = rem{i, w * total % sum}
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; given < total; k++ {
		out[rems[k].i]++
		given++
	}
	return out
}
