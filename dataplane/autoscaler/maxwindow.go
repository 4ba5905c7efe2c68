package autoscaler

import (
	"math"
	"time"
)

// maxWindow remembers the largest recommendation of the last scale-down-delay
// so a scale down only happens once the lower count has held for that long.
// Like Knative's it is bucketed by tick: one value per tick-sized slot of the
// clock, the larger one kept when two land in the same slot.
type maxWindow struct {
	size        int64 // slots in the window
	granularity int64 // seconds per slot
	entries     []maxEntry
}

type maxEntry struct {
	slot  int64
	value int32
}

func newMaxWindow(duration, granularity time.Duration) *maxWindow {
	g := max(int64(granularity/time.Second), 1)
	size := int64(math.Ceil(float64(duration) / float64(time.Duration(g)*time.Second)))
	return &maxWindow{size: max(size, 1), granularity: g}
}

// record stores v at now and returns the maximum over the window.
func (w *maxWindow) record(now time.Time, v int32) int32 {
	slot := now.Unix() / w.granularity
	kept := w.entries[:0]
	for _, e := range w.entries {
		if slot-e.slot < w.size {
			kept = append(kept, e)
		}
	}
	w.entries = kept
	if n := len(w.entries); n > 0 && w.entries[n-1].slot == slot {
		w.entries[n-1].value = max(w.entries[n-1].value, v)
	} else {
		w.entries = append(w.entries, maxEntry{slot: slot, value: v})
	}
	best := w.entries[0].value
	for _, e := range w.entries[1:] {
		best = max(best, e.value)
	}
	return best
}
