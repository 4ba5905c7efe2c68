package gitserver

import (
	"fmt"
	"runtime/debug"
	"sort"
)

// ZeroSHA is the object name Git uses for "no object": the Old of a
// created ref and the New of a deleted one.
const ZeroSHA = "0000000000000000000000000000000000000000"

// Push is what one receive-pack request changed in one repository.
type Push struct {
	// Repo is the repository name, as in the URL.
	Repo string
	// Dir is the bare repository's directory.
	Dir string
	// Updates are the refs the push created, moved or deleted, sorted by
	// ref name. Never empty.
	Updates []RefUpdate
}

// RefUpdate is one ref changed by a push.
type RefUpdate struct {
	// Ref is the full ref name, e.g. refs/heads/main.
	Ref string
	// Old is the object the ref pointed to before, ZeroSHA if it is new.
	Old string
	// New is the object it points to now, ZeroSHA if it was deleted.
	New string
}

// Created reports whether the push created the ref.
func (u RefUpdate) Created() bool { return u.Old == ZeroSHA }

// Deleted reports whether the push deleted the ref.
func (u RefUpdate) Deleted() bool { return u.New == ZeroSHA }

// diffRefs returns the updates that turn before into after, sorted by ref.
func diffRefs(before, after map[string]string) []RefUpdate {
	var updates []RefUpdate
	for ref, n := range after {
		if o, ok := before[ref]; !ok {
			updates = append(updates, RefUpdate{Ref: ref, Old: ZeroSHA, New: n})
		} else if o != n {
			updates = append(updates, RefUpdate{Ref: ref, Old: o, New: n})
		}
	}
	for ref, o := range before {
		if _, ok := after[ref]; !ok {
			updates = append(updates, RefUpdate{Ref: ref, Old: o, New: ZeroSHA})
		}
	}
	sort.Slice(updates, func(i, j int) bool { return updates[i].Ref < updates[j].Ref })
	return updates
}

// enqueue hands a push to OnPush in the background, after the pushes of
// the same repository that came before it.
func (s *Server) enqueue(st *repoState, p Push) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.opts.Log.Info("Server closed; not reporting push", "repo", p.Repo)
		return
	}
	st.pending = append(st.pending, p)
	if st.delivering {
		s.mu.Unlock()
		return
	}
	st.delivering = true
	s.wg.Add(1)
	s.mu.Unlock()
	go s.deliver(st)
}

// deliver drains one repository's queue.
func (s *Server) deliver(st *repoState) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		if len(st.pending) == 0 {
			st.delivering = false
			s.mu.Unlock()
			return
		}
		p := st.pending[0]
		st.pending = st.pending[1:]
		s.mu.Unlock()
		s.notify(p)
	}
}

// notify calls OnPush; a panic in it is logged, not allowed to take the
// server down.
func (s *Server) notify(p Push) {
	defer func() {
		if r := recover(); r != nil {
			s.opts.Log.Error(fmt.Errorf("panic: %v", r), "OnPush panicked", "repo", p.Repo, "stack", string(debug.Stack()))
		}
	}()
	s.opts.OnPush(s.ctx, p)
}
