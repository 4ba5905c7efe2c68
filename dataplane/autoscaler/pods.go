package autoscaler

import "time"

// simulatedPods stands in for the Deployment and its pods in the simulator:
// a requested pod becomes ready startDelay after it is requested, and
// removed pods go at once, the not yet ready ones first as Kubernetes does.
type simulatedPods struct {
	startDelay time.Duration
	readyAt    []time.Time // one per pod, oldest first
}

// scale sets the replicas at now.
func (p *simulatedPods) scale(replicas int32, now time.Time) {
	for int32(len(p.readyAt)) < replicas {
		p.readyAt = append(p.readyAt, now.Add(p.startDelay))
	}
	// Newer pods become ready no earlier than older ones, so trimming the
	// tail removes unready pods first.
	p.readyAt = p.readyAt[:min(int32(len(p.readyAt)), max(replicas, 0))]
}

func (p *simulatedPods) replicas() int32 { return int32(len(p.readyAt)) }

// ready counts the pods ready at now.
func (p *simulatedPods) ready(now time.Time) int32 {
	var n int32
	for _, t := range p.readyAt {
		if !t.After(now) {
			n++
		}
	}
	return n
}
