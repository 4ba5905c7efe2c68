//go:build !linux

package runtime

import (
	"errors"
	"os/exec"
)

// Cgroups are Linux's: elsewhere replicas run unlimited.
type (
	cgroupTree      struct{}
	podCgroup       struct{}
	containerCgroup struct{ limits limits }
)

func openCgroupTree(string, int64) (*cgroupTree, error) {
	return nil, errors.New("resource limits need Linux's cgroups")
}

func (t *cgroupTree) has(string) bool       { return false }
func (t *cgroupTree) close() error          { return nil }
func (t *cgroupTree) pod(string) *podCgroup { return nil }

func (p *podCgroup) container(string, limits) (*containerCgroup, error) { return nil, nil }
func (p *podCgroup) remove() error                                      { return nil }

func (cg *containerCgroup) enter(*exec.Cmd) (func() bool, error) {
	return func() bool { return false }, nil
}
func (cg *containerCgroup) view() []bindMount { return nil }
func (cg *containerCgroup) kill()             {}
func (cg *containerCgroup) oomKills() int64   { return 0 }
func (cg *containerCgroup) remove() error     { return nil }
