package nodefit

import (
	"bufio"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Requests is what a pod asks of its node, or what a node can give, as
// the scheduler counts it: CPU in millicores, memory in bytes. 0 asks
// nothing, or, of a node, does not limit.
type Requests struct{ CPUMilli, Memory int64 }

// Plus is a and b summed, as the requests of pods placed together.
func (a Requests) Plus(b Requests) Requests {
	return Requests{a.CPUMilli + b.CPUMilli, a.Memory + b.Memory}
}

// PodRequests is spec's requests as the scheduler sums them: its
// containers' (a request left unset is its limit, as the API server
// defaults a Pod), or its largest init container's where that is more,
// plus the pod's overhead.
func PodRequests(spec *corev1.PodSpec) Requests {
	var sum Requests
	for i := range spec.Containers {
		sum = sum.Plus(containerRequests(&spec.Containers[i]))
	}
	for i := range spec.InitContainers {
		init := containerRequests(&spec.InitContainers[i])
		sum.CPUMilli, sum.Memory = max(sum.CPUMilli, init.CPUMilli), max(sum.Memory, init.Memory)
	}
	return sum.Plus(FromList(spec.Overhead))
}

func containerRequests(c *corev1.Container) Requests {
	r := FromList(c.Resources.Requests)
	limits := FromList(c.Resources.Limits)
	if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
		r.CPUMilli = limits.CPUMilli
	}
	if _, ok := c.Resources.Requests[corev1.ResourceMemory]; !ok {
		r.Memory = limits.Memory
	}
	return r
}

// FromList is the cpu and memory of a resource list (a node's
// allocatable, a container's requests); other resources count for
// nothing.
func FromList(l corev1.ResourceList) Requests {
	var r Requests
	if q, ok := l[corev1.ResourceCPU]; ok {
		r.CPUMilli = q.MilliValue()
	}
	if q, ok := l[corev1.ResourceMemory]; ok {
		r.Memory = q.Value()
	}
	return r
}

// Insufficient says, in the scheduler's words (its NodeResourcesFit
// filter), why a pod asking want does not fit on a node that can give
// allocatable beside the pods placed there, which ask used; "" when it
// fits. A pod that asks nothing of a resource, or a node that does not
// limit it, always fits it.
func Insufficient(allocatable, used, want Requests) string {
	var short []string
	if want.CPUMilli > 0 && allocatable.CPUMilli > 0 && used.CPUMilli+want.CPUMilli > allocatable.CPUMilli {
		short = append(short, "1 Insufficient cpu")
	}
	if want.Memory > 0 && allocatable.Memory > 0 && used.Memory+want.Memory > allocatable.Memory {
		short = append(short, "1 Insufficient memory")
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("0/1 nodes are available: %s.", strings.Join(short, ", "))
}

// MachineAllocatable is what this machine gives pods: every CPU and all
// its memory (knit dev reserves nothing for itself, as a kubelet with no
// --system-reserved would), memory unknown (0) off Linux.
func MachineAllocatable() Requests {
	return Requests{CPUMilli: int64(goruntime.NumCPU()) * 1000, Memory: memTotal("/proc/meminfo")}
}

// memTotal reads MemTotal from a meminfo file; 0 when it cannot.
func memTotal(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
