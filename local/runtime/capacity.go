package runtime

import (
	"bufio"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// requests is what a pod asks of its node, as the scheduler counts it:
// CPU in millicores, memory in bytes.
type requests struct{ cpuMilli, memory int64 }

func (a requests) plus(b requests) requests {
	return requests{a.cpuMilli + b.cpuMilli, a.memory + b.memory}
}

// podRequests is spec's requests as the scheduler sums them: its
// containers' (a request left unset is its limit, as the API server
// defaults a Pod), or its largest init container's where that is more,
// plus the pod's overhead.
func podRequests(spec *corev1.PodSpec) requests {
	var sum requests
	for i := range spec.Containers {
		sum = sum.plus(containerRequests(&spec.Containers[i]))
	}
	for i := range spec.InitContainers {
		init := containerRequests(&spec.InitContainers[i])
		sum.cpuMilli, sum.memory = max(sum.cpuMilli, init.cpuMilli), max(sum.memory, init.memory)
	}
	return sum.plus(fromList(spec.Overhead))
}

func containerRequests(c *corev1.Container) requests {
	r := fromList(c.Resources.Requests)
	limits := fromList(c.Resources.Limits)
	if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
		r.cpuMilli = limits.cpuMilli
	}
	if _, ok := c.Resources.Requests[corev1.ResourceMemory]; !ok {
		r.memory = limits.memory
	}
	return r
}

func fromList(l corev1.ResourceList) requests {
	var r requests
	if q, ok := l[corev1.ResourceCPU]; ok {
		r.cpuMilli = q.MilliValue()
	}
	if q, ok := l[corev1.ResourceMemory]; ok {
		r.memory = q.Value()
	}
	return r
}

// node is this machine as the scheduler sees a node: what it can give
// (allocatable) and what the replicas placed on it asked for. A replica
// whose requests do not fit waits, Pending and Unschedulable, until one
// leaves, as a pod waits in the scheduler's queue.
type node struct {
	allocatable requests // 0: not limited
	// identity is what the scheduler's other filters read of a node: its
	// name, labels and taints (nodefit.go).
	identity nodeIdentity

	mu     sync.Mutex
	placed map[*replica]requests
	freed  chan struct{} // closed and replaced when a replica leaves
}

func newNode(allocatable requests, identity nodeIdentity) *node {
	return &node{allocatable: allocatable, identity: identity, placed: map[*replica]requests{}, freed: make(chan struct{})}
}

// place puts r on the node when want fits beside what is placed, and
// otherwise says why not in the scheduler's words, with a channel that
// closes when a replica leaves (the moment to try again).
func (n *node) place(r *replica, want requests) (unschedulable string, retry <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var used requests
	for _, q := range n.placed {
		used = used.plus(q)
	}
	var short []string
	if want.cpuMilli > 0 && n.allocatable.cpuMilli > 0 && used.cpuMilli+want.cpuMilli > n.allocatable.cpuMilli {
		short = append(short, "1 Insufficient cpu")
	}
	if want.memory > 0 && n.allocatable.memory > 0 && used.memory+want.memory > n.allocatable.memory {
		short = append(short, "1 Insufficient memory")
	}
	if len(short) > 0 {
		return fmt.Sprintf("0/1 nodes are available: %s.", strings.Join(short, ", ")), n.freed
	}
	n.placed[r] = want
	return "", nil
}

// remove takes r off the node, and wakes the replicas waiting for room.
func (n *node) remove(r *replica) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.placed[r]; !ok {
		return
	}
	delete(n.placed, r)
	close(n.freed)
	n.freed = make(chan struct{})
}

// machineAllocatable is what this machine gives pods: every CPU and all
// its memory (knit dev reserves nothing for itself, as a kubelet with no
// --system-reserved would), memory unknown (0) off Linux.
func machineAllocatable() requests {
	return requests{cpuMilli: int64(goruntime.NumCPU()) * 1000, memory: memTotal("/proc/meminfo")}
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
