package cgroups

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's CPU constants (k8s.io/kubernetes/pkg/kubelet/cm): a CPU is
// 1024 shares, shares are clamped to the kernel's range, and a quota is
// never below 1ms a period.
const (
	// CPUPeriodMicros is the CFS period a CPU quota is given per, the
	// kubelet's 100ms: an image's container asks runc for the same period
	// its cgroup above has.
	CPUPeriodMicros = 100000
	minQuotaMicros  = 1000
	minShares       = 2
	maxShares       = 262144
	sharesPerCPU    = 1024
)

// Limits are what a container's resources ask of its cgroup, computed as
// the kubelet computes them, so an app that reads its own cgroup (a JVM, a
// Go program with GOMEMLIMIT from it, Knative's runtime conformance image)
// sees the numbers it would see in a pod.
type Limits struct {
	// Memory is the memory limit in bytes; 0: no limit.
	Memory int64
	// CPUQuota is the CPU time allowed per CPUPeriodMicros, in
	// microseconds; 0: no limit.
	CPUQuota int64
	// CPUShares is the container's relative weight among the replica's
	// containers.
	CPUShares int64
}

// ContainerLimits maps a container's resources. A request left out
// defaults to the limit, as the API server defaults a Pod (the replica
// runs the template, not its published Pod); a container with no CPU
// request gets the kubelet's minimum of 2 shares.
func ContainerLimits(res corev1.ResourceRequirements) Limits {
	var l Limits
	if q, ok := res.Limits[corev1.ResourceMemory]; ok {
		l.Memory = q.Value()
	}
	cpuLimit, hasLimit := res.Limits[corev1.ResourceCPU]
	if hasLimit && cpuLimit.MilliValue() > 0 {
		l.CPUQuota = max(cpuLimit.MilliValue()*CPUPeriodMicros/1000, minQuotaMicros)
	}
	request, ok := res.Requests[corev1.ResourceCPU]
	if !ok && hasLimit {
		request = cpuLimit
	}
	l.CPUShares = Shares(request.MilliValue())
	return l
}

// Shares is the CPU weight of cpuMilli thousandths of a CPU as the kubelet
// computes it: 1024 shares a CPU, clamped to the kernel's [2, 262144]. A
// tree's weight among its siblings (OpenTree) is computed the same way, as
// the kubelet weighs its kubepods cgroup.
func Shares(cpuMilli int64) int64 {
	return min(max(cpuMilli*sharesPerCPU/1000, minShares), maxShares)
}

// file is one value written into a container's cgroup. optional files
// may be missing (swap accounting off, an older kernel): the write is
// skipped.
type file struct {
	controller string // the controller the file belongs to
	name       string
	value      string
	optional   bool
}

// v1Files are the limits in cgroup v1's files. The memory+swap limit equals
// the memory limit, so that a machine with swap kills at the limit, as a
// node without swap (the kubelet's default) does, rather than swapping.
func (l Limits) v1Files() []file {
	files := []file{{controller: "cpu", name: "cpu.shares", value: strconv.FormatInt(l.CPUShares, 10)}}
	quota := int64(-1)
	if l.CPUQuota > 0 {
		quota = l.CPUQuota
	}
	files = append(files,
		file{controller: "cpu", name: "cpu.cfs_period_us", value: strconv.Itoa(CPUPeriodMicros)},
		file{controller: "cpu", name: "cpu.cfs_quota_us", value: strconv.FormatInt(quota, 10)})
	if l.Memory > 0 {
		v := strconv.FormatInt(l.Memory, 10)
		files = append(files,
			file{controller: "memory", name: "memory.limit_in_bytes", value: v},
			file{controller: "memory", name: "memory.memsw.limit_in_bytes", value: v, optional: true})
	}
	return files
}

// v2Files are the limits in cgroup v2's files: cpu.weight converted from
// the shares as the kubelet (through runc) converts them, no swap, and
// memory.oom.group so that an OOM kill takes the whole container, as the
// kubelet has it since Kubernetes 1.28.
func (l Limits) v2Files() []file {
	quota := "max"
	if l.CPUQuota > 0 {
		quota = strconv.FormatInt(l.CPUQuota, 10)
	}
	files := []file{
		{controller: "cpu", name: "cpu.weight", value: strconv.FormatInt(sharesToWeight(l.CPUShares), 10)},
		{controller: "cpu", name: "cpu.max", value: quota + " " + strconv.Itoa(CPUPeriodMicros)},
	}
	if l.Memory > 0 {
		files = append(files,
			file{controller: "memory", name: "memory.max", value: strconv.FormatInt(l.Memory, 10)},
			file{controller: "memory", name: "memory.swap.max", value: "0", optional: true},
			file{controller: "memory", name: "memory.oom.group", value: "1", optional: true})
	}
	return files
}

// sharesToWeight maps cgroup v1's [2, 262144] shares linearly onto v2's
// [1, 10000] weight: the formula of the kubelet's cgroup v2 KEP (2254),
// which Knative's conformance test checks.
func sharesToWeight(shares int64) int64 {
	return 1 + (shares-minShares)*9999/(maxShares-minShares)
}
