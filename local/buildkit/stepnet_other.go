//go:build !linux

package buildkit

import (
	"errors"
	"net"
	"net/netip"
)

// stepNetwork is Linux's: elsewhere no RUN step gets a network.
type stepNetwork struct{ listener net.Listener }

func openStepNetwork(string, netip.Prefix) (*stepNetwork, error) {
	return nil, errors.New("--build-allow-host needs Linux: RUN steps' network is a bridge and a network namespace")
}

func (*stepNetwork) Close() error { return nil }
