package canary

import (
	"math"
	"sort"
)

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) of the latencies in s, in
// seconds, the way Prometheus' histogram_quantile does, so the number on
// the PR is the one a Prometheus dashboard would show for the same
// buckets: find the bucket holding the q·count-th observation and
// interpolate linearly inside it (from 0 for the first bucket). A quantile
// that falls in the +Inf bucket is the highest finite bound, the most the
// histogram can say. It is NaN when there is nothing to estimate from (no
// observations, or no +Inf bucket), -Inf below q=0 and +Inf above q=1.
func (s Snapshot) Quantile(q float64) float64 {
	switch {
	case math.IsNaN(q):
		return math.NaN()
	case q < 0:
		return math.Inf(-1)
	case q > 1:
		return math.Inf(1)
	}
	bs := s.Buckets
	if len(bs) < 2 || !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		return math.NaN()
	}
	total := bs[len(bs)-1].Count
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	b := sort.Search(len(bs)-1, func(i int) bool { return bs[i].Count >= rank })
	switch {
	case b == len(bs)-1:
		return bs[len(bs)-2].UpperBound
	case b == 0 && bs[0].UpperBound <= 0:
		return bs[0].UpperBound
	}
	start, end, count := 0.0, bs[b].UpperBound, bs[b].Count
	if b > 0 {
		start = bs[b-1].UpperBound
		count -= bs[b-1].Count
		rank -= bs[b-1].Count
	}
	if count <= 0 { // unreachable with monotonic counts; guards division
		return end
	}
	return start + (end-start)*(rank/count)
}
