package ingress

// scheduleLen is the length of a route's pick cycle: percents are whole
// numbers, so a 100-slot cycle gives every Revision exactly its share.
const scheduleLen = 100

// buildSchedule spreads targets over a 100-slot cycle by smooth weighted
// round robin: each target appears percent times, evenly interleaved, so
// even a short burst of requests sees the split. Targets with 0 % never
// appear; a schedule of all-zero percents is empty.
func buildSchedule(percents []int64) []uint16 {
	var total int64
	for _, p := range percents {
		total += p
	}
	if total == 0 {
		return nil
	}
	sched := make([]uint16, 0, scheduleLen)
	current := make([]int64, len(percents))
	for len(sched) < scheduleLen {
		best := -1
		for i, p := range percents {
			current[i] += p * scheduleLen / total
			if p > 0 && (best < 0 || current[i] > current[best]) {
				best = i
			}
		}
		current[best] -= scheduleLen
		sched = append(sched, uint16(best))
	}
	return sched
}
