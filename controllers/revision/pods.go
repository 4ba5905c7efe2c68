package revision

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// podRevisionIndex indexes the pod cache by the Revision a pod serves
// (its serving.knative.dev/revision label), so a Revision's pods are one
// index lookup, however many pods its namespace holds.
const podRevisionIndex = "pod.revision"

// newPodCache is a cache of Revisions' pods alone, for status.
// containerStatuses: only pods with the revision label (never the rest of
// the cluster's), each cut to its name, that label and its containers'
// names and image IDs. A cache of its own, so the manager's cache and
// the composition roots stay as they are; the manager starts it.
func newPodCache(mgr ctrl.Manager) (cache.Cache, error) {
	hasRevision, err := labels.NewRequirement(servingv1.RevisionLabelKey, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("pod cache selector: %w", err)
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {
			Label: labels.NewSelector().Add(*hasRevision), Transform: slimPod,
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("pod cache: %w", err)
	}
	if err := c.IndexField(context.Background(), &corev1.Pod{}, podRevisionIndex, podRevision); err != nil {
		return nil, fmt.Errorf("index pods by Revision: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add pod cache: %w", err)
	}
	return c, nil
}

// podRevision is podRevisionIndex's key: the Revision the pod serves.
func podRevision(o client.Object) []string {
	return []string{o.GetLabels()[servingv1.RevisionLabelKey]}
}

// slimPod keeps what status.containerStatuses needs of a pod, so the
// cache holds a few hundred bytes a pod, not its whole spec and status.
func slimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
		Labels: map[string]string{servingv1.RevisionLabelKey: p.Labels[servingv1.RevisionLabelKey]},
	}}
	for _, cs := range p.Status.ContainerStatuses {
		slim.Status.ContainerStatuses = append(slim.Status.ContainerStatuses, corev1.ContainerStatus{Name: cs.Name, ImageID: cs.ImageID})
	}
	return slim, nil
}

// watchPods wakes a pod's Revision when imageIDsChanged.
func watchPods(c cache.Cache) source.Source {
	return source.Kind(c, &corev1.Pod{},
		handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, p *corev1.Pod) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Labels[servingv1.RevisionLabelKey]}}}
		}),
		imageIDsChanged)
}

// imageIDsChanged passes a pod that reports image IDs it did not before:
// one created with them, or a container's start. Every other pod change
// (readiness, restarts, deletion) wakes nothing.
var imageIDsChanged = predicate.TypedFuncs[*corev1.Pod]{
	CreateFunc: func(e event.TypedCreateEvent[*corev1.Pod]) bool { return len(imageIDs(e.Object)) > 0 },
	UpdateFunc: func(e event.TypedUpdateEvent[*corev1.Pod]) bool {
		return !slices.Equal(imageIDs(e.ObjectOld), imageIDs(e.ObjectNew))
	},
	DeleteFunc:  func(event.TypedDeleteEvent[*corev1.Pod]) bool { return false },
	GenericFunc: func(event.TypedGenericEvent[*corev1.Pod]) bool { return false },
}

// imageIDs are the pod's containers' reported image IDs, in order.
func imageIDs(p *corev1.Pod) []string {
	var out []string
	for _, cs := range p.Status.ContainerStatuses {
		if cs.ImageID != "" {
			out = append(out, cs.Name+"="+cs.ImageID)
		}
	}
	return out
}

// markContainerStatuses records the digests the Revision's containers
// run (ContainerStatuses) once its pods report them all; set once, as
// Knative sets them, and kept when the pods are gone.
func (r *Reconciler) markContainerStatuses(ctx context.Context, rev *servingv1.Revision) error {
	if r.pods == nil || digestsKnown(rev) {
		return nil
	}
	pods := &corev1.PodList{}
	if err := r.pods.List(ctx, pods, client.InNamespace(rev.Namespace), client.MatchingFields{podRevisionIndex: rev.Name}); err != nil {
		return fmt.Errorf("list pods of Revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	if statuses := ContainerStatuses(rev, pods.Items); statuses != nil {
		rev.Status.ContainerStatuses = statuses
	}
	return nil
}
