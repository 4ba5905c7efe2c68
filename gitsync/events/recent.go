package events

// recentIDs remembers the last ids a sink settled (took, or refused for
// good), bounded, so an occurrence announced again — a GitRepository
// resync failing on the same commit, a Revision re-read after a restart —
// is recognised by its id and sent once. It is not safe for concurrent use.
type recentIDs struct {
	ids   []string // ring; ids[next] is the oldest once full
	next  int
	set   map[string]struct{}
	limit int
}

func newRecentIDs(limit int) recentIDs {
	return recentIDs{set: map[string]struct{}{}, limit: limit}
}

func (r *recentIDs) has(id string) bool {
	_, ok := r.set[id]
	return ok
}

// add remembers id, forgetting the oldest when full.
func (r *recentIDs) add(id string) {
	if r.limit <= 0 || r.has(id) {
		return
	}
	if len(r.ids) < r.limit {
		r.ids = append(r.ids, id)
	} else {
		delete(r.set, r.ids[r.next])
		r.ids[r.next] = id
		r.next = (r.next + 1) % r.limit
	}
	r.set[id] = struct{}{}
}

// list returns the ids, oldest first.
func (r *recentIDs) list() []string {
	out := make([]string, 0, len(r.ids))
	out = append(out, r.ids[r.next:]...)
	return append(out, r.ids[:r.next]...)
}
