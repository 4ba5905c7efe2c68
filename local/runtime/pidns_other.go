//go:build !linux

package runtime

import "errors"

// pidNamespace is a replica's shared PID namespace: Linux only, where
// container images run.
type pidNamespace struct{}

func openPIDNamespace(string) (*pidNamespace, error) {
	return nil, errors.New("PID namespaces need Linux")
}

func (*pidNamespace) path() string { return "" }
func (*pidNamespace) alive() bool  { return false }
func (*pidNamespace) close() error { return nil }
