package pullrequest

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/knitops/knit/gitsync/canary"
)

// window is where a canary step's analysis starts: both revisions'
// counters, per replica, when the step began. Counters live in the
// replicas, so the start is remembered here; after a restart of knit the
// step's window starts again.
type window struct {
	commit         string
	step           int32
	stable, canary map[string]canary.Snapshot
}

// windows are the running steps' starts, by PullRequest.
type windows struct {
	mu sync.Mutex
	m  map[types.NamespacedName]window
}

func newWindows() *windows { return &windows{m: map[types.NamespacedName]window{}} }

// get returns the start of step of commit, if it was taken.
func (w *windows) get(key types.NamespacedName, commit string, step int32) (window, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	win, ok := w.m[key]
	return win, ok && win.commit == commit && win.step == step
}

func (w *windows) set(key types.NamespacedName, win window) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.m[key] = win
}

func (w *windows) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}
