//go:build !linux

package netns

import (
	"errors"
	"os/exec"
)

// Namespace is an isolated replica's network; there is none outside
// Linux.
type Namespace struct{}

// Pool hands out replica networks; there are none outside Linux.
type Pool struct{}

var errNoIsolation = errors.New("isolated replica networks need Linux")

// NewPool fails: network namespaces are Linux's.
func NewPool() (*Pool, error) { return nil, errNoIsolation }

// Open fails: network namespaces are Linux's.
func (p *Pool) Open() (*Namespace, error) { return nil, errNoIsolation }

// Refill has no spare to make.
func (p *Pool) Refill() {}

// CloseSpare has no spare to remove.
func (p *Pool) CloseSpare() error { return nil }

// PodIP is "": there is no replica network.
func (n *Namespace) PodIP() string { return "" }

// HostIP is "": there is no replica network.
func (n *Namespace) HostIP() string { return "" }

// HostLink is "": there is no veth pair.
func (n *Namespace) HostLink() string { return "" }

// Start fails: network namespaces are Linux's.
func (n *Namespace) Start(cmd *exec.Cmd) (stuck bool, err error) { return false, errNoIsolation }

// Close has nothing to close.
func (n *Namespace) Close() error { return nil }
