package runtime

import (
	"fmt"
	"log/slog"
	"os/exec"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/knitops/knit/local/cgroups"
	"github.com/knitops/knit/local/nodefit"
	"github.com/knitops/knit/local/view"
)

// replicaCgroups is the runtime's cgroup tree (package cgroups), or why
// replicas run without one (not root, no controller, not Linux).
type replicaCgroups struct {
	tree   *cgroups.Tree
	err    error
	warned atomic.Bool
}

// openCgroups gives the runtime its cgroups, before any replica starts.
// Without them replicas run as before, unlimited; that is said once, when
// a container that asks for limits starts (see unenforced).
func (rt *Runtime) openCgroups() {
	rt.cgroups.tree, rt.cgroups.err = cgroups.OpenTree(rt.instance, treeShares(rt.node.allocatable.CPUMilli))
	if rt.cgroups.err != nil {
		rt.log.Info("Replicas run without cgroups: resource limits are not enforced", "reason", rt.cgroups.err.Error())
	}
}

// unenforced says which of l's limits this machine cannot enforce, and
// why; "" when all can be.
func (c *replicaCgroups) unenforced(l cgroups.Limits) string {
	return c.tree.Unenforced(l, c.err)
}

// containerCgroup makes container c's cgroup with its limits (nil without
// cgroups). The first container whose limits cannot be enforced makes
// knit dev warn, once: the machine cannot, whichever Revision asks. It is
// not a condition on the Revision, which runs and serves; a warning where
// knit dev's user reads is where they can act (run knit dev as root, or
// in a cgroup delegated to them).
func (r *replica) containerCgroup(c *corev1.Container) (*cgroups.Container, error) {
	l := cgroups.ContainerLimits(c.Resources)
	if msg := r.rt.cgroups.unenforced(l); msg != "" && r.rt.cgroups.warned.CompareAndSwap(false, true) {
		slog.Warn("Resource limits of replicas are not enforced", "reason", msg, "deployment", r.key.String(), "container", c.Name)
	}
	cg, err := r.cgroup.Container(c.Name, l)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return cg, nil
}

// treeShares is the CPU weight of the runtime's whole tree, the kubelet's
// for its kubepods cgroup: 1024 shares per allocatable CPU (every CPU of
// the machine when Allocatable leaves it out). The kernel's default, 1024,
// weighs all the replicas together like one busy thread of knit dev or its
// API server, which are busiest exactly when a replica starts: a cold
// start then waited on them (the ko:// median 30 % slower here).
func treeShares(cpuMilli int64) int64 {
	if cpuMilli <= 0 {
		cpuMilli = nodefit.MachineAllocatable().CPUMilli
	}
	return cgroups.Shares(cpuMilli)
}

// startIn starts cmd in the network and the cgroup from the caller's
// thread, locked to its goroutine; stuck as podNetwork.start has it.
func startIn(cmd *exec.Cmd, net *podNetwork, cg *cgroups.Container) (stuck bool, err error) {
	leave, err := cg.Enter(cmd)
	if err == nil {
		stuck, err = net.start(cmd)
	}
	return leave() || stuck, err
}

// describeExit says how a run ended, for messages. An OOM kill during the
// run (oomed) is told as the kubelet tells it, OOMKilled with the exit
// code (137 when the main process was the one killed), and names the
// limit.
func describeExit(cg *cgroups.Container, p *process, oomed bool) string {
	desc, code := p.exitDescription()
	if cg == nil || !oomed {
		return desc
	}
	return fmt.Sprintf("was OOMKilled: exit code %d, over its memory limit of %s", code, resource.NewQuantity(cg.Limits().Memory, resource.BinarySI))
}

// cgroupView is the container's own cgroup as the container sees it
// (cgroups.Container.View), as mounts of its view.
func cgroupView(cg *cgroups.Container) []view.Mount {
	var ms []view.Mount
	for _, m := range cg.View() {
		ms = append(ms, view.Mount{Volume: "cgroup", Source: m.Source, Target: m.Target, ReadOnly: true})
	}
	view.SortMounts(ms)
	return ms
}
