//go:build !linux

package engine

import (
	"errors"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// defaultSeccomp: seccomp is Linux's.
func defaultSeccomp(*specs.Spec) (*specs.LinuxSeccomp, error) {
	return nil, errors.New("seccomp needs Linux")
}
