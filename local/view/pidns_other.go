//go:build !linux

package view

import "errors"

// PIDNamespace is a replica's shared PID namespace: Linux only, where
// container images run.
type PIDNamespace struct{}

// OpenPIDNamespace fails: PID namespaces are Linux's.
func OpenPIDNamespace(string) (*PIDNamespace, error) {
	return nil, errors.New("PID namespaces need Linux")
}

// Path, Alive and Close have no namespace to name, watch or close.
func (*PIDNamespace) Path() string { return "" }
func (*PIDNamespace) Alive() bool  { return false }
func (*PIDNamespace) Close() error { return nil }
