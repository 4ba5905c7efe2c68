package cgroups

import (
	"fmt"
	"strings"
)

// Unenforced says which of l's limits the tree cannot enforce, and why
// (openErr: why OpenTree gave no tree; nil when it did); "" when all can
// be. A nil tree enforces nothing. The runtime warns with it once, where
// knit dev's user reads, rather than fail a replica the machine can run.
func (t *Tree) Unenforced(l Limits, openErr error) string {
	var kinds []string
	for _, k := range []struct {
		controller string
		set        bool
	}{{"memory", l.Memory > 0}, {"cpu", l.CPUQuota > 0}} {
		if k.set && !t.Has(k.controller) {
			kinds = append(kinds, k.controller)
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	why := "knit dev's cgroup does not delegate that controller"
	if openErr != nil {
		why = openErr.Error()
	}
	return fmt.Sprintf("%s limits are not enforced: %s", strings.Join(kinds, " and "), why)
}

// Mount is a container's own cgroup directory bound read-only where its
// hierarchy is mounted, so that the container reads its own limits where
// an app in a pod reads them (Container.View). The runtime binds it into
// the container's mount namespace with its volumes.
type Mount struct {
	// Source is the container's cgroup directory on this machine.
	Source string
	// Target is where the container sees it: the hierarchy's mount point.
	Target string
}
