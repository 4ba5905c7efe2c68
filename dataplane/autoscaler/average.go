package autoscaler

import (
	"math"
	"time"
)

// Aggregation is how a window of buckets becomes one value.
type Aggregation string

// Knative's two aggregation algorithms, chosen per revision with the
// metric-aggregation-algorithm annotation.
const (
	// AggregationLinear is the plain average over the window. It is
	// Knative's default (TimedFloat64Buckets) and so knit's.
	AggregationLinear Aggregation = "linear"
	// AggregationWeightedExponential weighs recent seconds more: each second
	// back counts (1-c) times the one after it. Knative offers it as opt-in.
	AggregationWeightedExponential Aggregation = "weightedExponential"
)

func parseAggregation(v string) (Aggregation, bool) {
	switch v {
	case string(AggregationLinear):
		return AggregationLinear, true
	case string(AggregationWeightedExponential), "weighted-exponential":
		return AggregationWeightedExponential, true
	}
	return AggregationLinear, false
}

// average is the plain average of the seconds inside the window that lie
// between the first and the last write. Seconds after the last write are
// left out rather than counted as zeros, as in Knative, and the result is
// floored to 6 decimals as Knative does so float noise cannot add a pod.
func (b *buckets) average(now time.Time) float64 {
	now = now.Truncate(bucketSize)
	if b.empty(now) || now.Sub(b.last) >= b.window {
		return 0
	}
	n := int64(len(b.values))
	span := int64(b.last.Sub(b.first)/bucketSize) + 1
	nowS, lastS := now.Unix(), b.last.Unix()
	var sum float64
	if nowS <= lastS {
		for _, v := range b.values {
			sum += v
		}
		return floor6(sum / float64(min(span, n)))
	}
	for s := nowS - n + 1; s <= lastS; s++ {
		sum += *b.slot(s)
	}
	return floor6(sum / float64(min(span, n-(nowS-lastS))))
}

// weightedAverage is Knative's exponentially weighted average: the newest
// second has weight c, each older one (1-c) times the next; seconds since the
// last write count as zeros. c is chosen so the window's weights sum to
// 99.99%, but never below 0.2.
func (b *buckets) weightedAverage(now time.Time) float64 {
	now = now.Truncate(bucketSize)
	if b.empty(now) {
		return 0
	}
	n := len(b.values)
	c := math.Max(1-math.Pow(1-0.9999, 1/float64(n)), 0.2)
	weight, count := c, n
	if gap := int(now.Unix() - b.last.Unix()); gap > 0 {
		weight *= math.Pow(1-c, float64(gap))
		count -= gap
	}
	var sum float64
	for i := 0; i < count; i++ {
		sum += *b.slot(b.last.Unix() - int64(i)) * weight
		weight *= 1 - c
	}
	return sum
}

func floor6(v float64) float64 {
	return math.Floor(v*1e6) / 1e6
}
