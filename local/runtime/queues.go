package runtime

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

type workQueue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// queues are the work queues of the runtime's two controllers, captured
// when they start, so that a replica's change (a process ready, crashed,
// gone) can ask for a reconcile without an API event to carry it.
type queues struct {
	mu           sync.Mutex
	deployments  workQueue
	endpointsFor workQueue // keyed by Service
}

// source is a controller source that only captures the controller's queue.
func (q *queues) source(into *workQueue) source.Source {
	return source.Func(func(_ context.Context, queue workQueue) error {
		q.mu.Lock()
		defer q.mu.Unlock()
		*into = queue
		return nil
	})
}

func (q *queues) add(which *workQueue, key types.NamespacedName) {
	q.mu.Lock()
	queue := *which
	q.mu.Unlock()
	if queue != nil {
		queue.Add(reconcile.Request{NamespacedName: key})
	}
}

// replicaChanged asks for the Deployment to be reconciled: its status
// recomputed, and the Services selecting it enqueued for EndpointSlices.
func (rt *Runtime) replicaChanged(key types.NamespacedName) {
	rt.queues.add(&rt.queues.deployments, key)
}
