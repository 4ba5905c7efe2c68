package dev

import (
	"fmt"

	"github.com/knitops/knit/local/runtime"
)

// networkAuto picks the replicas' network for the machine.
const networkAuto = "auto"

// replicaNetwork decides where replicas listen: an explicit choice is
// taken as is (isolated fails at once where it cannot work); auto isolates
// them when this machine allows it and says why not otherwise.
func replicaNetwork(choice string) (runtime.Network, string, error) {
	switch choice {
	case string(runtime.NetworkShared):
		return runtime.NetworkShared, "shared: this machine's network, on loopback ports (--replica-network shared)", nil
	case string(runtime.NetworkIsolated):
		if err := runtime.CheckIsolation(); err != nil {
			return "", "", fmt.Errorf("--replica-network isolated: %w", err)
		}
	default:
		if err := runtime.CheckIsolation(); err != nil {
			return runtime.NetworkShared, fmt.Sprintf("shared: an app that binds every interface is reachable from the network (isolating replicas needs root on Linux: %v)", err), nil
		}
	}
	return runtime.NetworkIsolated, "isolated: a network namespace each, reachable only through knit", nil
}
