//go:build !linux

package runtime

import (
	"errors"
	"os/exec"
)

// netNamespace exists on Linux only.
type netNamespace struct{}

type netPool struct{}

var errNoIsolation = errors.New("isolated replica networks need Linux")

func newNetPool() (*netPool, error) { return nil, errNoIsolation }

func (p *netPool) open() (*podNetwork, error) { return nil, errNoIsolation }

func (p *netPool) refill() {}

func (p *netPool) closeSpare() error { return nil }

func (n *netNamespace) start(cmd *exec.Cmd) (stuck bool, err error) { return false, errNoIsolation }

func (n *netNamespace) close() error { return nil }
