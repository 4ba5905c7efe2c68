package autoscaler

import "time"

// simulatedPods stands in for the Deployment and its pods in the simulator:
// a requested pod becomes ready startDelay after it is requested, and
// removed pods go at once, the not yet ready ones first as Kubernetes does.
// Pods requested together are kept as one batch, so the simulator's memory
// follows the number of scale-ups, not of pods: a trace asking for a
// billion pods is simulated, not a billion-element slice.
type simulatedPods struct {
	startDelay time.Duration
	batches    []podBatch // oldest first
	total      int32
}

// podBatch is n pods requested at once, ready at readyAt.
type podBatch struct {
	readyAt time.Time
	n       int32
}

// scale sets the replicas at now.
func (p *simulatedPods) scale(replicas int32, now time.Time) {
	replicas = max(replicas, 0)
	if replicas > p.total {
		p.batches = append(p.batches, podBatch{readyAt: now.Add(p.startDelay), n: replicas - p.total})
		p.total = replicas
	}
	// Newer pods become ready no earlier than older ones, so trimming the
	// tail removes unready pods first.
	for p.total > replicas {
		last := &p.batches[len(p.batches)-1]
		cut := min(last.n, p.total-replicas)
		last.n -= cut
		p.total -= cut
		if last.n == 0 {
			p.batches = p.batches[:len(p.batches)-1]
		}
	}
}

func (p *simulatedPods) replicas() int32 { return p.total }

// ready counts the pods ready at now.
func (p *simulatedPods) ready(now time.Time) int32 {
	var n int32
	for _, b := range p.batches {
		if !b.readyAt.After(now) {
			n += b.n
		}
	}
	return n
}
