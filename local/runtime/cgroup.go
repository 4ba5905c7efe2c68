package runtime

import (
	"fmt"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The kubelet's CPU constants (k8s.io/kubernetes/pkg/kubelet/cm): a CPU is
// 1024 shares, shares are clamped to the kernel's range, and a quota is
// never below 1ms a period.
const (
	cpuPeriodMicros = 100000
	minQuotaMicros  = 1000
	minShares       = 2
	maxShares       = 262144
	sharesPerCPU    = 1024
)

// limits are what a container's resources ask of its cgroup, computed as
// the kubelet computes them, so an app that reads its own cgroup (a JVM, a
// Go program with GOMEMLIMIT from it, Knative's runtime conformance image)
// sees the numbers it would see in a pod.
type limits struct {
	memory    int64 // bytes; 0: no limit
	cpuQuota  int64 // microseconds per cpuPeriodMicros; 0: no limit
	cpuShares int64 // relative weight among the replica's containers
}

// containerLimits maps a container's resources. A request left out
// defaults to the limit, as the API server defaults a Pod (the replica
// runs the template, not its published Pod); a container with no CPU request gets the kubelet's
// minimum of 2 shares.
func containerLimits(res corev1.ResourceRequirements) limits {
	var l limits
	if q, ok := res.Limits[corev1.ResourceMemory]; ok {
		l.memory = q.Value()
	}
	cpuLimit, hasLimit := res.Limits[corev1.ResourceCPU]
	if hasLimit && cpuLimit.MilliValue() > 0 {
		l.cpuQuota = max(cpuLimit.MilliValue()*cpuPeriodMicros/1000, minQuotaMicros)
	}
	request, ok := res.Requests[corev1.ResourceCPU]
	if !ok && hasLimit {
		request = cpuLimit
	}
	l.cpuShares = min(max(request.MilliValue()*sharesPerCPU/1000, minShares), maxShares)
	return l
}

// limited reports whether the container limits something: a container with
// neither a memory nor a CPU limit runs as it would without cgroups,
// except for its CPU weight.
func (l limits) limited() bool { return l.memory > 0 || l.cpuQuota > 0 }

// cgroupFile is one value written into a container's cgroup. optional
// files may be missing (swap accounting off, an older kernel): the write
// is skipped.
type cgroupFile struct {
	controller string // the controller the file belongs to
	name       string
	value      string
	optional   bool
}

// v1Files are the limits in cgroup v1's files. The memory+swap limit equals
// the memory limit, so that a machine with swap kills at the limit, as a
// node without swap (the kubelet's default) does, rather than swapping.
func (l limits) v1Files() []cgroupFile {
	files := []cgroupFile{{controller: "cpu", name: "cpu.shares", value: strconv.FormatInt(l.cpuShares, 10)}}
	quota := int64(-1)
	if l.cpuQuota > 0 {
		quota = l.cpuQuota
	}
	files = append(files,
		cgroupFile{controller: "cpu", name: "cpu.cfs_period_us", value: strconv.Itoa(cpuPeriodMicros)},
		cgroupFile{controller: "cpu", name: "cpu.cfs_quota_us", value: strconv.FormatInt(quota, 10)})
	if l.memory > 0 {
		v := strconv.FormatInt(l.memory, 10)
		files = append(files,
			cgroupFile{controller: "memory", name: "memory.limit_in_bytes", value: v},
			cgroupFile{controller: "memory", name: "memory.memsw.limit_in_bytes", value: v, optional: true})
	}
	return files
}

// v2Files are the limits in cgroup v2's files: cpu.weight converted from
// the shares as the kubelet (through runc) converts them, no swap, and
// memory.oom.group so that an OOM kill takes the whole container, as the
// kubelet has it since Kubernetes 1.28.
func (l limits) v2Files() []cgroupFile {
	quota := "max"
	if l.cpuQuota > 0 {
		quota = strconv.FormatInt(l.cpuQuota, 10)
	}
	files := []cgroupFile{
		{controller: "cpu", name: "cpu.weight", value: strconv.FormatInt(sharesToWeight(l.cpuShares), 10)},
		{controller: "cpu", name: "cpu.max", value: quota + " " + strconv.Itoa(cpuPeriodMicros)},
	}
	if l.memory > 0 {
		files = append(files,
			cgroupFile{controller: "memory", name: "memory.max", value: strconv.FormatInt(l.memory, 10)},
			cgroupFile{controller: "memory", name: "memory.swap.max", value: "0", optional: true},
			cgroupFile{controller: "memory", name: "memory.oom.group", value: "1", optional: true})
	}
	return files
}

// sharesToWeight maps cgroup v1's [2, 262144] shares linearly onto v2's
// [1, 10000] weight: the formula of the kubelet's cgroup v2 KEP (2254),
// which Knative's conformance test checks.
func sharesToWeight(shares int64) int64 {
	return 1 + (shares-minShares)*9999/(maxShares-minShares)
}

// replicaCgroups is the runtime's cgroup tree, or why replicas run
// without one (not root, no controller, not Linux).
type replicaCgroups struct {
	tree   *cgroupTree
	err    error
	warned atomic.Bool
}

// openCgroups gives the runtime its cgroups, before any replica starts.
// Without them replicas run as before, unlimited; that is said once, when
// a container that asks for limits starts (see unenforced).
func (rt *Runtime) openCgroups() {
	rt.cgroups.tree, rt.cgroups.err = openCgroupTree(rt.instance, treeShares(rt.node.allocatable.cpuMilli))
	if rt.cgroups.err != nil {
		rt.log.Info("Replicas run without cgroups: resource limits are not enforced", "reason", rt.cgroups.err.Error())
	}
}

// unenforced says which of l's limits this machine cannot enforce, and
// why; "" when all can be.
func (c *replicaCgroups) unenforced(l limits) string {
	var kinds []string
	for _, k := range []struct {
		controller string
		set        bool
	}{{"memory", l.memory > 0}, {"cpu", l.cpuQuota > 0}} {
		if k.set && !c.tree.has(k.controller) {
			kinds = append(kinds, k.controller)
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	why := "knit dev's cgroup does not delegate that controller"
	if c.err != nil {
		why = c.err.Error()
	}
	return fmt.Sprintf("%s limits are not enforced: %s", strings.Join(kinds, " and "), why)
}

// containerCgroup makes container c's cgroup with its limits (nil without
// cgroups). The first container whose limits cannot be enforced makes
// knit dev warn, once: the machine cannot, whichever Revision asks. It is
// not a condition on the Revision, which runs and serves; a warning where
// knit dev's user reads is where they can act (run knit dev as root, or
// in a cgroup delegated to them).
func (r *replica) containerCgroup(c *corev1.Container) (*containerCgroup, error) {
	l := containerLimits(c.Resources)
	if msg := r.rt.cgroups.unenforced(l); msg != "" && r.rt.cgroups.warned.CompareAndSwap(false, true) {
		slog.Warn("Resource limits of replicas are not enforced", "reason", msg, "deployment", r.key.String(), "container", c.Name)
	}
	cg, err := r.cgroup.container(c.Name, l)
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
		cpuMilli = machineAllocatable().cpuMilli
	}
	return min(max(cpuMilli*sharesPerCPU/1000, minShares), maxShares)
}

// startIn starts cmd in the network and the cgroup from the caller's
// thread, locked to its goroutine; stuck as podNetwork.start has it.
func startIn(cmd *exec.Cmd, net *podNetwork, cg *containerCgroup) (stuck bool, err error) {
	leave, err := cg.enter(cmd)
	if err == nil {
		stuck, err = net.start(cmd)
	}
	return leave() || stuck, err
}

// describeExit says how a run ended, for messages. An OOM kill during the
// run (oomed) is told as the kubelet tells it, OOMKilled with the exit
// code (137 when the main process was the one killed), and names the
// limit.
func (cg *containerCgroup) describeExit(p *process, oomed bool) string {
	desc, code := p.exitDescription()
	if cg == nil || !oomed {
		return desc
	}
	return fmt.Sprintf("was OOMKilled: exit code %d, over its memory limit of %s", code, resource.NewQuantity(cg.limits.memory, resource.BinarySI))
}
