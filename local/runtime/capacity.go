package runtime

import (
	"sync"

	"github.com/knitops/knit/local/nodefit"
)

// node is this machine as the scheduler sees a node: what it can give
// (allocatable) and what the replicas placed on it asked for. A replica
// whose requests do not fit waits, Pending and Unschedulable, until one
// leaves, as a pod waits in the scheduler's queue. What fits and why not
// is package nodefit's.
type node struct {
	allocatable nodefit.Requests // 0: not limited
	// identity is what the scheduler's other filters read of a node: its
	// name, labels and taints.
	identity nodefit.Node

	mu     sync.Mutex
	placed map[*replica]nodefit.Requests
	freed  chan struct{} // closed and replaced when a replica leaves
}

func newNode(allocatable nodefit.Requests, identity nodefit.Node) *node {
	return &node{allocatable: allocatable, identity: identity, placed: map[*replica]nodefit.Requests{}, freed: make(chan struct{})}
}

// place puts r on the node when want fits beside what is placed, and
// otherwise says why not in the scheduler's words, with a channel that
// closes when a replica leaves (the moment to try again).
func (n *node) place(r *replica, want nodefit.Requests) (unschedulable string, retry <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var used nodefit.Requests
	for _, q := range n.placed {
		used = used.Plus(q)
	}
	if why := nodefit.Insufficient(n.allocatable, used, want); why != "" {
		return why, n.freed
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
