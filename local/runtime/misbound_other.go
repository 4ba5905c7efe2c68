//go:build !linux

package runtime

import (
	"context"
	"errors"
)

// listeningPorts finds nothing where there is no /proc to read: a
// readiness failure keeps the prober's message.
func listeningPorts(int) ([]int32, error) { return nil, nil }

// appProcessGroup: images run on Linux only.
func (o *OCI) appProcessGroup(context.Context, string) (int, error) {
	return 0, errors.ErrUnsupported
}
