//go:build !linux

package cgroups

import (
	"errors"
	"os/exec"
)

// Cgroups are Linux's: elsewhere replicas run unlimited.
type (
	// Tree is a runtime's cgroups; there is none outside Linux.
	Tree struct{}
	// Pod is a replica's cgroup; there is none outside Linux.
	Pod struct{}
	// Container is a container's cgroup; there is none outside Linux.
	Container struct{ limits Limits }
)

// OpenTree fails outside Linux: replicas run without cgroups.
func OpenTree(string, int64) (*Tree, error) {
	return nil, errors.New("resource limits need Linux's cgroups")
}

// Has reports that no controller's limits are written.
func (t *Tree) Has(string) bool { return false }

// Unified reports false: there is no hierarchy.
func (t *Tree) Unified() bool { return false }

// MountPoint is "": there is no hierarchy.
func (t *Tree) MountPoint(string) string { return "" }

// Close has nothing to remove.
func (t *Tree) Close() error { return nil }

// Pod is nil: replicas run without cgroups.
func (t *Tree) Pod(string) *Pod { return nil }

// Container is nil: containers run unlimited.
func (p *Pod) Container(string, Limits) (*Container, error) { return nil, nil }

// Dirs is nil: there are no directories.
func (p *Pod) Dirs() map[string]string { return nil }

// Remove has nothing to remove.
func (p *Pod) Remove() error { return nil }

// Enter leaves cmd as it is.
func (cg *Container) Enter(*exec.Cmd) (func() bool, error) {
	return func() bool { return false }, nil
}

// View is nothing to mount.
func (cg *Container) View() []Mount { return nil }

// Limits are none: nothing was limited.
func (cg *Container) Limits() Limits {
	if cg == nil {
		return Limits{}
	}
	return cg.limits
}

// Kill has no cgroup to empty.
func (cg *Container) Kill() {}

// OOMKills is 0: nothing is limited.
func (cg *Container) OOMKills() int64 { return 0 }

// Remove has nothing to remove.
func (cg *Container) Remove() error { return nil }
