package stepper

import (
	"context"
	"fmt"
	"sync"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/canary"
)

// Window is where a step's analysis starts: both revisions' counters, per
// replica, when the step began. Counters live in the replicas, so the
// start is remembered in the process; after a restart of knit the step's
// window starts again.
type Window struct {
	Commit         string
	Step           int32
	Stable, Canary map[string]canary.Snapshot
}

// Windows are the running steps' starts, by whatever runs the step (a
// pull request, a Service's rollout).
type Windows[K comparable] struct {
	mu sync.Mutex
	m  map[K]Window
}

// NewWindows returns an empty set of windows.
func NewWindows[K comparable]() *Windows[K] { return &Windows[K]{m: map[K]Window{}} }

// Get returns the start of step of commit, if it was taken.
func (w *Windows[K]) Get(key K, commit string, step int32) (Window, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	win, ok := w.m[key]
	return win, ok && win.Commit == commit && win.Step == step
}

// Set records win as key's running step's start.
func (w *Windows[K]) Set(key K, win Window) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.m[key] = win
}

// Forget drops key's window.
func (w *Windows[K]) Forget(key K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}

// Keep drops every window whose key keep refuses: those of rollouts or
// pull requests that ended.
func (w *Windows[K]) Keep(keep func(K) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.m {
		if !keep(k) {
			delete(w.m, k)
		}
	}
}

// Metrics reads a revision's queue-proxy counters, per replica.
type Metrics func(ctx context.Context, namespace, revision string) (map[string]canary.Snapshot, error)

// Snapshot reads both revisions' counters now, as the start or the end
// of c's running step.
func Snapshot(ctx context.Context, metrics Metrics, namespace, stable, candidate string, c *knitv1alpha1.CanaryStatus) (Window, error) {
	win := Window{Commit: c.Commit, Step: c.Step}
	var err error
	if win.Stable, err = metrics(ctx, namespace, stable); err != nil {
		return Window{}, fmt.Errorf("metrics of the stable revision %s: %w", stable, err)
	}
	if win.Canary, err = metrics(ctx, namespace, candidate); err != nil {
		return Window{}, fmt.Errorf("metrics of the canary %s: %w", candidate, err)
	}
	return win, nil
}
