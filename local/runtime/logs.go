package runtime

import (
	"path/filepath"

	"github.com/knitops/knit/local/nodefit"
	"github.com/knitops/knit/local/podlogs"
)

// runLog is where a container's runs wrote. Every run of a container
// appends to one file, so a run is a byte range of it: from where its
// output began to where the next run's did.
type runLog struct {
	runs     int
	from     int64 // where the current (or last) run began
	prevFrom int64 // where the run before it began, when runs > 1
}

// started records a run whose output begins at offset from.
func (l *runLog) started(from int64) {
	if l.runs > 0 {
		l.prevFrom = l.from
	}
	l.from = from
	l.runs++
}

// logPath is the file every run of the replica's container c writes to.
func (r *replica) logPath(c string) string {
	return filepath.Join(r.rt.opts.logsDir(), r.key.Namespace, r.key.Name, r.id+"-"+c+".log")
}

// ContainerLog finds the log of a container of one of the runtime's Pods,
// for knit dev's kubelet log endpoint (package podlogs): the current run's
// output, followable until the replica is gone, or with previous the run
// before it, as the kubelet keeps a container's last terminated instance.
func (rt *Runtime) ContainerLog(namespace, pod, container string, previous bool) (podlogs.Log, error) {
	r := rt.replicaOfPod(namespace, pod)
	if r == nil {
		return podlogs.Log{}, podlogs.PodNotFound(pod)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, states := range [][]containerState{r.containers, r.inits} {
		for _, s := range states {
			if s.name == container {
				return r.runLogOf(s, previous)
			}
		}
	}
	return podlogs.Log{}, podlogs.ContainerNotFound(container, pod)
}

// runLogOf is s's run as a Log. Called with r.mu held.
func (r *replica) runLogOf(s containerState, previous bool) (podlogs.Log, error) {
	path := r.logPath(s.name)
	if !previous {
		return podlogs.Log{Path: path, From: s.log.from, To: -1, Live: r.done}, nil
	}
	if s.log.runs < 2 {
		return podlogs.Log{}, podlogs.PreviousNotFound(s.name, r.pod.Name)
	}
	return podlogs.Log{Path: path, From: s.log.prevFrom, To: s.log.from}, nil
}

// replicaOfPod is the replica whose Pod is namespace/pod, nil if none.
func (rt *Runtime) replicaOfPod(namespace, pod string) *replica {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for key, st := range rt.deployments {
		if key.Namespace != namespace {
			continue
		}
		for _, r := range st.replicas {
			if r.pod.Name == pod {
				return r
			}
		}
	}
	return nil
}

// Node is this machine as the scheduler sees it (name, labels, taints) and
// what it gives replicas, for knit dev's Node object.
func (rt *Runtime) Node() (nodefit.Node, nodefit.Requests) {
	return rt.node.identity, rt.node.allocatable
}
