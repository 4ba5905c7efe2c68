package activator

// firstAvailableMax is the largest containerConcurrency balanced by
// first-available; above it, and for unlimited, round-robin. Knative's
// choice: with small slots, packing the first replicas keeps the others
// free for the next burst and lets extra replicas scale back down.
const firstAvailableMax = 3

// endpoint is one probed-ready replica of a Revision, as the throttler
// tracks it. Its fields are guarded by the throttler's lock.
type endpoint struct {
	addr     string
	inflight int
	// gone is set when the endpoint left the ready set while requests
	// still held it; their release no longer counts against capacity.
	gone bool
}

// choose picks the endpoint for the next request, or -1 when every one
// is full. cursor is where round-robin resumes; the caller moves it past
// the pick.
func choose(eps []*endpoint, containerConcurrency, cursor int) int {
	n := len(eps)
	if n == 0 {
		return -1
	}
	if containerConcurrency == 0 {
		return cursor % n
	}
	start := cursor % n
	if containerConcurrency <= firstAvailableMax {
		start = 0
	}
	for i := range n {
		j := (start + i) % n
		if eps[j].inflight < containerConcurrency {
			return j
		}
	}
	return -1
}
